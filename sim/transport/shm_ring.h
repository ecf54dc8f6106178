// shm_ring.h -- a single-producer, single-consumer byte ring in a shared-memory segment,
// used by two processes.
//
// Neither side has a thread waiting on the ring: a side that finds it empty (consumer) or
// full (producer) and wants to be told asks for a doorbell (ArmConsumerDoorbell,
// ArmProducerDoorbell), and the other side, after it wrote or read, takes that request
// (TakeConsumerDoorbell, TakeProducerDoorbell) and rings the doorbell some other way (a frame
// on the connection's socket, which the progress engine waits for). Each request is taken
// once, so a busy ring costs no doorbells and a sleeping side gets exactly one.
//
// The control block lives in the segment, so the peer can scribble on it: every index read
// from it is checked, and the ring never touches bytes outside its own data area.
#ifndef RPMA_SIM_TRANSPORT_SHM_RING_H_
#define RPMA_SIM_TRANSPORT_SHM_RING_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <atomic>

namespace rpma_sim {

// The shared part of one ring. Counters only grow; position = counter % capacity.
struct RingControl {
  alignas(64) std::atomic<uint64_t> head{0};         // bytes ever written, by the producer
  std::atomic<uint32_t> producer_closed{0};          // the producer wrote its last byte
  std::atomic<uint32_t> producer_wants_doorbell{0};  // ring it when space is made
  alignas(64) std::atomic<uint64_t> tail{0};         // bytes ever read, by the consumer
  std::atomic<uint32_t> consumer_closed{0};          // the consumer reads no more
  std::atomic<uint32_t> consumer_wants_doorbell{0};  // ring it when bytes are written
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "rings need lock-free atomics");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "rings need lock-free atomics");

// This process's handle on a ring: one side uses it as producer, the other as consumer.
class ShmRing {
 public:
  ShmRing() = default;
  ShmRing(RingControl* control, uint8_t* data, size_t capacity)
      : control_(control), data_(data), capacity_(capacity) {}

  // How the producer reads the bytes it copies in.
  enum class Source {
    kOwn,          // the simulator's own memory: memcpy
    kApplication,  // memory the application registered, which it may have unmapped under
                   // a posted request: read as a device reads it (guarded_copy.h)
  };

  // What TryWrite returns when the first bytes of an application's part cannot be read.
  static constexpr ssize_t kUnreadable = -2;

  // Producer: copies what fits of `parts` (possibly nothing). Returns the bytes taken, -1 if
  // the control block is corrupt or the consumer is gone, or kUnreadable (nothing taken)
  // if the first part of kApplication `source` to copy cannot be read; the bytes before
  // such a part are taken, and the ring stays as sound as before.
  ssize_t TryWrite(const iovec* parts, int count, Source source = Source::kOwn);

  // Consumer: copies up to `size` bytes out. Returns the bytes taken (0 when empty), or -1
  // if the control block is corrupt.
  ssize_t TryRead(uint8_t* data, size_t size);

  // Consumer: copies the next `size` bytes without taking them; false if fewer are there.
  bool Peek(uint8_t* data, size_t size) const;

  // Consumer: asks the producer to ring when it writes. False (and nothing asked) if there
  // is something to read already, the producer closed, or the ring is corrupt: look again
  // instead of waiting.
  bool ArmConsumerDoorbell();
  // Producer: asks the consumer to ring when it reads. False if there is space already, the
  // consumer closed, or the ring is corrupt.
  bool ArmProducerDoorbell();
  // After writing (producer) or reading (consumer): whether the other side asked to be
  // rung, taking its request.
  bool TakeConsumerDoorbell();
  bool TakeProducerDoorbell();

  // Marks this side's end in the control block.
  void CloseAsProducer() { control_->producer_closed.store(1); }
  void CloseAsConsumer() { control_->consumer_closed.store(1); }

  bool producer_closed() const { return control_->producer_closed.load() != 0; }
  bool consumer_closed() const { return control_->consumer_closed.load() != 0; }
  size_t capacity() const { return capacity_; }
  // Bytes waiting to be read; -1 if the control block is corrupt.
  int64_t Readable() const;
  // The shared part, which the peer writes too (tests scribble on it as a peer can).
  RingControl* control() const { return control_; }

 private:
  // Copies `size` bytes starting at counter `from` out of the data area.
  void CopyOut(uint64_t from, uint8_t* data, size_t size) const;

  RingControl* control_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SHM_RING_H_
