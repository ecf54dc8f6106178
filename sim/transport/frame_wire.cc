// frame_wire.cc -- the reader and writer threads of a wire, and closing it.
#include "sim/transport/frame_wire.h"

#include <sys/uio.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "sim/common/log.h"
#include "sim/transport/wire_threads.h"

namespace rpma_sim {
namespace {

// Bodies are read in pieces of at most this size, so a peer that announces a large frame
// must really send it before the memory is taken.
constexpr size_t kReadChunk = 4 << 20;

// While an application keeps taking frames with DeliverArrived, the reader thread looks
// again this often; once it stopped, at most this long passes before the reader thread
// takes over. Each look costs a context switch on the poller's cores, so not too often.
constexpr auto kPollerActive = std::chrono::milliseconds(1);

}  // namespace

FrameWire::FrameWire(std::unique_ptr<ByteStream> stream) : stream_(std::move(stream)) {}

FrameWire::~FrameWire() = default;

void FrameWire::Start(std::shared_ptr<WireHandler> handler) {
  auto self = shared_from_this();
  std::weak_ptr<FrameWire> weak = self;
  auto stop = [weak] {
    if (auto wire = weak.lock()) wire->Abort();
  };
  StartWireThread([self, handler]() mutable { self->ReadLoop(std::move(handler)); }, stop);
  StartWireThread([self] { self->WriteLoop(); }, stop);
}

bool FrameWire::Send(FrameType type, std::vector<uint8_t> body) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closing_) return false;
  Outgoing out{Frame{type, std::move(body)}, 0};
  if (outbound_.empty() && !writing_) {
    // Nothing ahead of it: send right here without waiting (no thread hop); whatever the
    // socket does not take now goes to the writer thread.
    if (!WriteFrame(&out, /*dont_wait=*/true)) return false;
    if (out.sent == kFrameHeaderSize + out.frame.body.size()) return true;
  }
  outbound_.push_back(std::move(out));
  wake_writer_.notify_one();
  return true;
}

void FrameWire::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closing_ = true;
  wake_writer_.notify_one();
}

void FrameWire::Abort() {
  aborted_ = true;
  Close();
  stream_->Shutdown();
}

bool FrameWire::ReadFrame(Frame* frame, std::string* reason) {
  uint8_t header[kFrameHeaderSize];
  if (!stream_->ReadExactly(header, sizeof(header))) {
    *reason = "the connection ended";
    return false;
  }
  uint32_t length = 0;
  if (!DecodeFrameHeader(header, &frame->type, &length, reason)) {
    SIM_LOG_ERROR("malformed frame from %s: %s; closing the connection", peer().c_str(),
                  reason->c_str());
    *reason = "malformed frame: " + *reason;
    return false;
  }
  while (frame->body.size() < length) {
    size_t start = frame->body.size();
    size_t piece = std::min<size_t>(kReadChunk, length - start);
    frame->body.resize(start + piece);
    if (!stream_->ReadExactly(frame->body.data() + start, piece)) {
      *reason = "the connection ended inside a frame";
      return false;
    }
  }
  return true;
}

void FrameWire::ReadLoop(std::shared_ptr<WireHandler> handler) {
  {
    std::lock_guard<std::mutex> lock(read_mutex_);
    handler_ = handler;
  }
  std::string reason;
  uint64_t polls_seen = 0;
  for (;;) {
    for (uint64_t polls; (polls = polls_.load(std::memory_order_relaxed)) != polls_seen &&
                         !stream_->Ended();) {
      polls_seen = polls;
      std::this_thread::sleep_for(kPollerActive);
    }
    // Waits without the lock: meanwhile a polling thread may take what arrives.
    bool more = stream_->WaitReadable();
    std::lock_guard<std::mutex> lock(read_mutex_);
    if (more && stream_->CanPeek() && stream_->Available() == 0) continue;  // it did
    Frame frame;
    if (!ReadFrame(&frame, &reason)) {
      handler_.reset();
      break;
    }
    handler->OnFrame(std::move(frame));
  }
  Abort();  // stop the writer too
  handler->OnWireClosed(reason);
}

void FrameWire::DeliverArrived() {
  if (!stream_->CanPeek()) return;
  std::unique_lock<std::mutex> lock(read_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  // A few at a time: the caller is an application polling for its completions.
  int delivered = 0;
  for (; delivered < 16 && handler_; ++delivered) {
    uint8_t header[kFrameHeaderSize];
    if (!stream_->Peek(header, sizeof(header))) break;
    Frame frame;
    uint32_t length = 0;
    std::string reason;
    // A malformed header, or a frame still arriving, is left to the reader thread.
    if (!DecodeFrameHeader(header, &frame.type, &length, &reason)) break;
    if (stream_->Available() < kFrameHeaderSize + length) break;
    frame.body.resize(length);
    if (!stream_->TryReadExactly(header, sizeof(header)) ||
        !stream_->TryReadExactly(frame.body.data(), length)) {
      SIM_LOG_ERROR("the stream from %s lost bytes it had announced; closing the connection",
                    peer().c_str());
      lock.unlock();
      Abort();
      return;
    }
    handler_->OnFrame(std::move(frame));
  }
  // Only a poller that takes frames makes the reader thread step aside: whatever it leaves
  // (a frame still arriving, a malformed one) the reader thread must see to.
  if (delivered > 0) polls_.fetch_add(1, std::memory_order_relaxed);
}

bool FrameWire::WriteFrame(Outgoing* out, bool dont_wait) {
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
    ssize_t n = stream_->Write(remaining, count, dont_wait);
    if (n < 0) return false;
    if (n == 0 && dont_wait) return true;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void FrameWire::WriteLoop() {
  for (;;) {
    Outgoing out;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      writing_ = false;
      drained_.notify_all();
      wake_writer_.wait(lock, [this] { return closing_ || !outbound_.empty(); });
      if (outbound_.empty() || aborted_) break;  // closing, and everything was sent
      out = std::move(outbound_.front());
      outbound_.pop_front();
      writing_ = true;
    }
    if (!WriteFrame(&out, /*dont_wait=*/false)) break;
  }
  stream_->Shutdown();  // the reader sees the end and tells the handler
  std::lock_guard<std::mutex> lock(mutex_);
  writer_done_ = true;
  drained_.notify_all();
}

bool FrameWire::Flush(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  return drained_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                           [this] { return writer_done_ || (outbound_.empty() && !writing_); });
}

}  // namespace rpma_sim
