// shm_stream.h -- a ByteStream over a connection's shared-memory segment: this side writes
// its outbound ring and reads its inbound one.
//
// A segment cannot tell that the peer process died, so the connection's TCP socket stays
// open beside it as the watch: when the socket ends, PeerGone lets the reader take what the
// peer wrote before it went, then end. Shutting the stream down closes that socket too
// (`on_shutdown`), after this side's last bytes are in the ring.
#ifndef RPMA_SIM_TRANSPORT_SHM_STREAM_H_
#define RPMA_SIM_TRANSPORT_SHM_STREAM_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "sim/transport/byte_stream.h"
#include "sim/transport/shm_segment.h"

namespace rpma_sim {

class ShmStream : public ByteStream {
 public:
  ShmStream(std::shared_ptr<ShmSegment> segment, std::string peer,
            std::function<void()> on_shutdown);

  bool ReadExactly(uint8_t* data, size_t size) override;
  ssize_t Write(const iovec* parts, int count, bool dont_wait) override;
  void Shutdown() override;
  const std::string& peer() const override { return peer_; }
  bool CanPeek() const override { return true; }
  size_t Available() override;
  bool Peek(uint8_t* data, size_t size) override;
  bool TryReadExactly(uint8_t* data, size_t size) override;
  bool WaitReadable() override;
  bool Ended() override;

  // The peer's process or link is gone: nothing more will be written.
  void PeerGone();

 private:
  std::shared_ptr<ShmSegment> segment_;
  std::string peer_;
  std::function<void()> on_shutdown_;
  std::atomic<bool> stopped_{false};
  std::atomic<bool> peer_gone_{false};
  std::atomic<bool> shutdown_done_{false};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SHM_STREAM_H_
