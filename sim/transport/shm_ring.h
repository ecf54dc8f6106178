// shm_ring.h -- a single-producer, single-consumer byte ring in a shared-memory segment,
// used by two processes; the waiting side sleeps on a futex in the segment.
//
// The control block lives in the segment, so the peer can scribble on it: every index read
// from it is checked, and the ring never touches bytes outside its own data area.
#ifndef RPMA_SIM_TRANSPORT_SHM_RING_H_
#define RPMA_SIM_TRANSPORT_SHM_RING_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <atomic>
#include <functional>

namespace rpma_sim {

// The shared part of one ring. Counters only grow; position = counter % capacity.
struct RingControl {
  alignas(64) std::atomic<uint64_t> head{0};  // bytes ever written, by the producer
  std::atomic<uint32_t> producer_closed{0};   // the producer wrote its last byte
  std::atomic<uint32_t> producer_waiting{0};  // the producer sleeps until there is space
  std::atomic<uint32_t> space_signal{0};      // the futex word it sleeps on
  alignas(64) std::atomic<uint64_t> tail{0};  // bytes ever read, by the consumer
  std::atomic<uint32_t> consumer_closed{0};   // the consumer reads no more
  std::atomic<uint32_t> consumer_waiting{0};  // the consumer sleeps until there is data
  std::atomic<uint32_t> data_signal{0};       // the futex word it sleeps on
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "rings need lock-free atomics");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "rings need lock-free atomics");

// This process's handle on a ring: one side uses it as producer, the other as consumer.
class ShmRing {
 public:
  ShmRing() = default;
  ShmRing(RingControl* control, uint8_t* data, size_t capacity)
      : control_(control), data_(data), capacity_(capacity) {}

  // Producer: copies what fits of `parts` (possibly nothing) and wakes a sleeping consumer.
  // Returns the bytes taken, or -1 if the control block is corrupt or the consumer is gone.
  ssize_t TryWrite(const iovec* parts, int count);

  // Consumer: copies up to `size` bytes out. Returns the bytes taken (0 when empty), or -1
  // if the control block is corrupt.
  ssize_t TryRead(uint8_t* data, size_t size);

  // Consumer: copies the next `size` bytes without taking them; false if fewer are there.
  bool Peek(uint8_t* data, size_t size) const;

  // Waits until there is data to read (consumer) or space to write (producer), or until
  // `stop` says to give up. Spins briefly, then sleeps on the futex, waking at least every
  // few milliseconds to ask `stop` again.
  void WaitForData(const std::function<bool()>& stop);
  void WaitForSpace(const std::function<bool()>& stop);

  // Wakes a consumer or producer of this process sleeping on the ring (to let it notice
  // `stop`), and marks this side's end in the control block.
  void WakeConsumer();
  void WakeProducer();
  void CloseAsProducer();
  void CloseAsConsumer();

  bool producer_closed() const { return control_->producer_closed.load() != 0; }
  bool consumer_closed() const { return control_->consumer_closed.load() != 0; }
  // Bytes waiting to be read; -1 if the control block is corrupt.
  int64_t Readable() const;

 private:
  // Copies `size` bytes starting at counter `from` out of the data area.
  void CopyOut(uint64_t from, uint8_t* data, size_t size) const;

  RingControl* control_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SHM_RING_H_
