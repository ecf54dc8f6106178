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
    bool first = outbound_.empty();
    queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) + body.size(),
                        std::memory_order_relaxed);
    outbound_.push_back(Outgoing{Frame{type, std::move(body)}, 0});
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
    // Broken (as OnWritable finds it): nothing more goes out.
    aborted_ = true;
    closing_ = true;
    DropQueuedLocked();
  }
  // The reader sees the end and tells the handler (a corrupt ring does not end the stream
  // by itself, as a broken socket does).
  stream_->Shutdown();
  return false;
}

void FrameWire::SendQueued() {
  if (queued_frames() == 0) return;
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || aborted_) return;
  // The engine still waits for the stream to drain (writing_): it finds the queue as this
  // leaves it, and a broken stream (aborted_) ends the wire there.
  if (WriteQueuedLocked() == WriteResult::kBroken) aborted_ = true;
}

FrameWire::WriteResult FrameWire::WriteQueuedLocked() {
  while (!outbound_.empty()) {
    Outgoing& out = outbound_.front();
    // Not counted from before the write that may finish it: a peer that reads it may
    // answer at once, and its next request must not find it still counted here.
    size_t body_size = out.frame.body.size();
    queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) - body_size,
                        std::memory_order_relaxed);
    if (!WriteFrame(&out)) return WriteResult::kBroken;  // DropQueuedLocked counts the rest
    if (out.sent < kFrameHeaderSize + body_size) {
      queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) + body_size,
                          std::memory_order_relaxed);
      return WriteResult::kFull;
    }
    outbound_.pop_front();
    queued_frames_.store(outbound_.size(), std::memory_order_relaxed);
  }
  return WriteResult::kDrained;
}

void FrameWire::DropQueuedLocked() {
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

void FrameWire::DeliverArrived() {
  if (!stream_->CanPeek() || engine_waiting_.load(std::memory_order_relaxed)) return;
  std::unique_lock<std::mutex> lock(read_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  // A few frames at a time: the caller is an application polling for its completions. It
  // reads a frame still arriving as far as it arrived (a large one over TCP is, for most
  // of its time), and goes on with it at its next poll, wherever the engine left it.
  int delivered = 0;
  bool progressed = false, left_to_engine = false;
  std::string reason;
  while (delivered < 16 && handler_ && !left_to_engine) {
    Incoming& in = incoming_;
    if (in.header_got == 0) {
      // A header is looked at before it is taken: a malformed one is the engine's to
      // report. (Part of a header, which only the engine takes, is too.)
      uint8_t header[kFrameHeaderSize];
      FrameType type;
      uint32_t length;
      if (!stream_->Peek(header, sizeof(header))) break;
      left_to_engine = !DecodeFrameHeader(header, &type, &length, &reason);
    } else {
      left_to_engine = in.header_got < kFrameHeaderSize;
    }
    if (left_to_engine) break;
    size_t before = in.header_got + in.body_got;
    ReadResult result = ReadSome(&reason);
    progressed |= in.header_got + in.body_got != before || result == ReadResult::kFrame;
    if (result == ReadResult::kWouldBlock) break;
    // The end of the stream stays where it is: the engine sees it too, and tells the
    // handler on its own thread.
    left_to_engine = result == ReadResult::kEnd;
    if (left_to_engine) break;
    Frame frame = std::move(in.frame);
    in = Incoming();
    ++delivered;
    SIM_HAPPENS_AFTER(&g_frames_handed_over);
    handler_->OnFrame(std::move(frame));
  }
  // Only a poller that takes bytes, and leaves nothing it cannot take, makes the engine
  // step aside: whatever it leaves (a malformed frame, the end) the engine must see to, at
  // once. (A server busy-polling during 1 MiB writes over TCP otherwise kept the engine
  // aside 1 ms per frame it took: 0.2-0.3 GiB/s instead of 2-3.)
  if (progressed && !left_to_engine) polls_.fetch_add(1, std::memory_order_relaxed);
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
