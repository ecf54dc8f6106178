// frame_wire_threads.cc -- the reader and writer threads of a wire whose stream the
// progress engine cannot wait for (a shared-memory segment, for now).
#include <algorithm>
#include <chrono>
#include <thread>

#include "sim/common/log.h"
#include "sim/transport/frame_wire.h"
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

void FrameWire::StartThreads(std::shared_ptr<WireHandler> handler) {
  auto self = shared_from_this();
  std::weak_ptr<FrameWire> weak = self;
  auto stop = [weak] {
    if (auto wire = weak.lock()) wire->Abort();
  };
  StartWireThread([self, handler]() mutable { self->ReadLoop(std::move(handler)); }, stop);
  StartWireThread([self] { self->WriteLoop(); }, stop);
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

}  // namespace rpma_sim
