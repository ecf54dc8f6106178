// shm_stream.h -- a ByteStream over a connection's shared-memory segment: this side writes
// its outbound ring and reads its inbound one, on the progress engine like a socket.
//
// No thread waits on the rings. A wire waiting for bytes (or for space) first looks at the
// ring again on every turn of the engine for a short while after the last activity (a
// reply that comes within it costs no wakeup), then asks the peer for a doorbell
// (ShmRing::ArmConsumerDoorbell) and sleeps: the peer, after its next write, rings it with
// `ring_doorbell` (a DOORBELL frame on the connection's TCP socket, which this process's
// engine waits for), and OnDoorbell looks again. An idle connection costs no CPU.
//
// A segment cannot tell that the peer process died, so the connection's TCP socket is also
// the watch: when it ends, PeerGone lets the reader take what the peer wrote before it
// went, then end. Shutting the stream down closes that socket too (`on_shutdown`), after
// this side's last bytes are in the ring.
#ifndef RPMA_SIM_TRANSPORT_SHM_STREAM_H_
#define RPMA_SIM_TRANSPORT_SHM_STREAM_H_

#include <functional>
#include <memory>
#include <string>

#include "sim/transport/byte_stream.h"
#include "sim/transport/shm_segment.h"

namespace rpma_sim {

class ShmStream : public ByteStream {
 public:
  ShmStream(std::shared_ptr<ShmSegment> segment, std::string peer,
            std::function<void()> ring_doorbell, std::function<void()> on_shutdown);

  ssize_t Write(const iovec* parts, int count) override;
  ssize_t WriteFromApplication(const iovec* parts, int count) override;
  ssize_t TryRead(uint8_t* data, size_t size) override;
  void Shutdown() override;
  const std::string& peer() const override { return peer_; }
  void AsyncWaitReadable(std::function<void()> ready) override;
  void AsyncWaitWritable(std::function<void()> ready) override;

  // The peer rang: the waits look at the rings again. Any thread.
  void OnDoorbell();
  // The peer's process or link is gone: nothing more will be written. Any thread.
  void PeerGone();

 private:
  // What the engine's waits share with the stream; they may outlive it.
  struct State;

  // Write and WriteFromApplication, copying from `source`.
  ssize_t WriteFrom(const iovec* parts, int count, ShmRing::Source source);
  // After this side read: rings the peer's producer if it waits for space.
  void AfterRead();
  // After an access to the rings that returned `accessed` (negative: corrupt): whether the
  // connection must end because the ring is corrupt or the peer truncated the segment
  // (logged).
  bool Broken(ssize_t accessed);

  std::shared_ptr<State> state_;
  std::string peer_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SHM_STREAM_H_
