// frame_wire.cc -- queueing frames, closing and breaking a wire, and waiting until what was
// queued left. (Reading and writing the stream: frame_wire_engine.cc.)
#include "sim/transport/frame_wire.h"

#include <chrono>

#include "sim/common/happens_before.h"

namespace rpma_sim {

// For DRD (happens_before.h): everything done before a frame is sent happens before
// everything its reader does with it. One key for every wire of the process, since the two
// ends of a connection in one process are two wires: coarser than the truth, as fine as the
// process-wide lock that used to give DRD this ordering.
char g_frames_handed_over;

FrameWire::FrameWire(std::unique_ptr<ByteStream> stream) : stream_(std::move(stream)) {}

FrameWire::~FrameWire() = default;

bool FrameWire::Send(FrameType type, std::vector<uint8_t> body,
                     std::shared_ptr<FramePayload> payload) {
  SIM_HAPPENS_BEFORE(&g_frames_handed_over);
  size_t body_size = body.size() + (payload ? payload->size() : 0);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) return false;
    bool first = outbound_.empty();
    queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) + body_size,
                        std::memory_order_relaxed);
    outbound_.push_back(Outgoing{type, std::move(body), std::move(payload), body_size, 0});
    queued_frames_.store(outbound_.size(), std::memory_order_relaxed);
    // Nothing ahead of it: send right here without waiting (no thread hop); whatever the
    // stream does not take now is left to the engine (or to a polling application,
    // SendQueued). Behind other frames it only queues: the stream is full.
    WriteResult result = first ? WriteQueuedLocked() : WriteResult::kFull;
    if (result == WriteResult::kFull && !writing_) {
      writing_ = true;
      ArmWrite();
    }
    if (result != WriteResult::kBroken) return true;
    BreakLocked();
  }
  stream_->Shutdown();
  return false;
}

void FrameWire::BreakLocked() {
  aborted_ = true;
  closing_ = true;
  outbound_.clear();
  queued_frames_.store(0, std::memory_order_relaxed);
  queued_bytes_.store(0, std::memory_order_relaxed);
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

void FrameWire::EndReading(std::unique_lock<std::mutex>* read_lock, const std::string& reason) {
  std::shared_ptr<WireHandler> handler = std::move(handler_);
  read_lock->unlock();
  Abort();  // the writer stops too
  handler->OnWireClosed(reason);
}

bool FrameWire::Flush(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  return drained_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [this] { return writer_done_ || (outbound_.empty() && !writing_); });
}

}  // namespace rpma_sim
