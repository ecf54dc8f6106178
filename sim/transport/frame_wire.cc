// frame_wire.cc -- queueing frames, closing, taking arrived frames for a polling
// application, and waiting until what was queued left.
#include "sim/transport/frame_wire.h"

#include <sys/uio.h>

#include <chrono>

#include "sim/common/happens_before.h"
#include "sim/common/log.h"

namespace rpma_sim {

// For DRD (happens_before.h): everything done before a frame is sent happens before
// everything its reader does with it. One key for every wire of the process, since the two
// ends of a connection in one process are two wires: coarser than the truth, as fine as the
// process-wide lock that used to give DRD this ordering.
char g_frames_handed_over;

FrameWire::FrameWire(std::unique_ptr<ByteStream> stream) : stream_(std::move(stream)) {}

FrameWire::~FrameWire() = default;

void FrameWire::Start(std::shared_ptr<WireHandler> handler) { StartOnEngine(std::move(handler)); }

bool FrameWire::Send(FrameType type, std::vector<uint8_t> body) {
  SIM_HAPPENS_BEFORE(&g_frames_handed_over);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) return false;
    Outgoing out{Frame{type, std::move(body)}, 0};
    bool broken = false;
    if (outbound_.empty() && !writing_) {
      // Nothing ahead of it: send right here without waiting (no thread hop); whatever the
      // stream does not take now is left to the engine.
      broken = !WriteFrame(&out);
      if (!broken && out.sent == kFrameHeaderSize + out.frame.body.size()) return true;
    }
    if (!broken) {
      queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) + out.frame.body.size(),
                          std::memory_order_relaxed);
      outbound_.push_back(std::move(out));
      queued_frames_.store(outbound_.size(), std::memory_order_relaxed);
      if (!writing_) {
        writing_ = true;
        ArmWrite();
      }
      return true;
    }
    // Broken (as OnWritable finds it): nothing more goes out.
    aborted_ = true;
    closing_ = true;
  }
  // The reader sees the end and tells the handler (a corrupt ring does not end the stream
  // by itself, as a broken socket does).
  stream_->Shutdown();
  return false;
}

void FrameWire::Close() {
  bool shut_down = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    // An idle wire closes at once; a busy one once its queue drained.
    if (!writing_ && !writer_done_) shut_down = FinishWritingLocked();
  }
  if (shut_down) stream_->Shutdown();  // the reader sees the end and tells the handler
}

bool FrameWire::FinishWritingLocked() {
  writing_ = false;
  if (closing_) writer_done_ = true;
  drained_.notify_all();
  return closing_;
}

void FrameWire::Abort() {
  aborted_ = true;
  Close();
  stream_->Shutdown();
}

void FrameWire::DeliverArrived() {
  if (!stream_->CanPeek() || engine_waiting_.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::mutex> lock(read_mutex_, std::try_to_lock);
  // Not while the engine holds part of a frame: the stream's next bytes are its rest.
  if (!lock.owns_lock() || incoming_.header_got > 0) return;
  // A few at a time: the caller is an application polling for its completions.
  int delivered = 0;
  bool left_to_engine = false;
  for (; delivered < 16 && handler_; ++delivered) {
    uint8_t header[kFrameHeaderSize];
    if (!stream_->Peek(header, sizeof(header))) break;
    Frame frame;
    uint32_t length = 0;
    std::string reason;
    // A malformed header, or a frame still arriving, is left to the engine.
    left_to_engine = true;
    if (!DecodeFrameHeader(header, &frame.type, &length, &reason)) break;
    if (stream_->Available() < kFrameHeaderSize + length) break;
    left_to_engine = false;
    frame.body.resize(length);
    if (!stream_->TryReadExactly(header, sizeof(header)) ||
        !stream_->TryReadExactly(frame.body.data(), length)) {
      SIM_LOG_ERROR("the stream from %s lost bytes it had announced; closing the connection",
                    peer().c_str());
      lock.unlock();
      Abort();
      return;
    }
    SIM_HAPPENS_AFTER(&g_frames_handed_over);
    handler_->OnFrame(std::move(frame));
  }
  // Only a poller that takes frames, and leaves none arriving, makes the engine step aside:
  // whatever it leaves (a frame still arriving, as a large one over TCP is for most of its
  // time, or a malformed one) the engine must see to, at once. (A server busy-polling
  // during 1 MiB writes over TCP otherwise kept the engine aside 1 ms per frame it took:
  // 0.2-0.3 GiB/s instead of 2-3.)
  if (delivered > 0 && !left_to_engine) polls_.fetch_add(1, std::memory_order_relaxed);
}

bool FrameWire::WriteFrame(Outgoing* out) {
  const Frame& frame = out->frame;
  uint8_t header[kFrameHeaderSize];
  EncodeFrameHeader(frame.type, static_cast<uint32_t>(frame.body.size()), header);
  iovec parts[2] = {{header, sizeof(header)},
                    {const_cast<uint8_t*>(frame.body.data()), frame.body.size()}};
  size_t total = sizeof(header) + frame.body.size();
  size_t& sent = out->sent;
  while (sent < total) {
    iovec remaining[2];
    int count = 0;
    size_t skip = sent;
    for (const iovec& part : parts) {
      if (skip >= part.iov_len) {
        skip -= part.iov_len;
        continue;
      }
      remaining[count].iov_base = static_cast<uint8_t*>(part.iov_base) + skip;
      remaining[count].iov_len = part.iov_len - skip;
      skip = 0;
      ++count;
    }
    ssize_t n = stream_->Write(remaining, count);
    if (n < 0) return false;
    if (n == 0) return true;
    sent += static_cast<size_t>(n);
  }
  return true;
}

bool FrameWire::Flush(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  return drained_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [this] { return writer_done_ || (outbound_.empty() && !writing_); });
}

}  // namespace rpma_sim
