// frame_payload.h -- the last bytes of a frame to send, kept where their owner keeps them
// rather than copied into the frame: a large write's or send's bytes in the requester's
// registered memory (verbs/region_payload.h), or a read's bytes in the buffer they were
// copied into (OwnedPayload). The wire reads them only through WriteWith, each time the
// stream takes more, so their owner decides how long they stay readable.
#ifndef RPMA_SIM_TRANSPORT_FRAME_PAYLOAD_H_
#define RPMA_SIM_TRANSPORT_FRAME_PAYLOAD_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <functional>
#include <utility>
#include <vector>

namespace rpma_sim {

class FramePayload {
 public:
  virtual ~FramePayload() = default;

  // At most this many parts.
  static constexpr int kMaxParts = 2;

  // How many bytes: fixed for the payload's life.
  virtual size_t size() const = 0;

  // Calls `write` with all size() bytes as `count` parts (at most kMaxParts), which stay
  // in place and readable during the call, and returns what it returned. (Bytes that
  // cannot be read any more are replaced, never skipped: the peer was told the frame's
  // length.)
  virtual bool WriteWith(const std::function<bool(const iovec* parts, int count)>& write) = 0;

  // The bytes WriteWith gave could not be read (the application unmapped them): whether the
  // payload goes on without them, WriteWith giving from now on what stands in for them.
  virtual bool GiveUpBytes() { return false; }
};

// Bytes the payload keeps itself.
class OwnedPayload : public FramePayload {
 public:
  explicit OwnedPayload(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}

  size_t size() const override { return bytes_.size(); }
  bool WriteWith(const std::function<bool(const iovec* parts, int count)>& write) override {
    iovec part = {bytes_.data(), bytes_.size()};
    return write(&part, 1);
  }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_FRAME_PAYLOAD_H_
