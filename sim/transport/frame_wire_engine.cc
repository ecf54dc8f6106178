// frame_wire_engine.cc -- a wire on the progress engine: no thread of its own. The engine
// waits until the stream is readable, reads what arrived into the frame being assembled,
// hands each whole frame to the handler, and waits again; what Send could not write at once
// leaves when the stream is writable again.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>

#include "sim/common/happens_before.h"
#include "sim/common/log.h"
#include "sim/fabric/io_service.h"
#include "sim/transport/frame_wire.h"

namespace rpma_sim {
namespace {

// Bodies are read in pieces of at most this size, so a peer that announces a large frame
// must really send it before the memory is taken.
constexpr size_t kReadChunk = 4 << 20;

// Frames handled in one turn before the engine lets other connections' work run.
constexpr int kFramesPerTurn = 32;

// While an application keeps taking frames with DeliverArrived, the engine looks again this
// late instead of at once: each look costs a context switch on the poller's cores.
constexpr auto kPollerActive = std::chrono::milliseconds(1);

}  // namespace

void FrameWire::StartOnEngine(std::shared_ptr<WireHandler> handler) {
  EnsureProgressEngine();
  auto self = shared_from_this();
  // On the engine's thread: a socket's waits are never started from two threads, and the
  // handler is taken under read_mutex_ without the caller's locks held.
  boost::asio::post(IoContext(), [self, handler = std::move(handler)]() mutable {
    {
      std::lock_guard<std::mutex> lock(self->read_mutex_);
      self->handler_ = std::move(handler);
    }
    self->stream_->AsyncWaitReadable([self] { self->OnReadable(); });
  });
}

void FrameWire::OnReadable() {
  uint64_t polls = polls_.load(std::memory_order_relaxed);
  if (polls != polls_seen_ && !aborted_) {
    // An application is taking the frames itself: leave them to it for a while.
    polls_seen_ = polls;
    auto timer = std::make_shared<boost::asio::steady_timer>(IoContext(), kPollerActive);
    auto self = shared_from_this();
    timer->async_wait([self, timer](const boost::system::error_code&) { self->OnReadable(); });
    return;
  }
  engine_waiting_.store(true, std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(read_mutex_);
  engine_waiting_.store(false, std::memory_order_relaxed);
  if (!handler_) return;  // the wire ended already
  std::string reason;
  for (int frames = 0; frames < kFramesPerTurn; ++frames) {
    switch (ReadSome(&reason)) {
      case ReadResult::kFrame: {
        Frame frame = std::move(incoming_.frame);
        incoming_ = Incoming();
        SIM_HAPPENS_AFTER(&g_frames_handed_over);
        handler_->OnFrame(std::move(frame));
        continue;
      }
      case ReadResult::kWouldBlock: {
        lock.unlock();
        auto self = shared_from_this();
        stream_->AsyncWaitReadable([self] { self->OnReadable(); });
        return;
      }
      case ReadResult::kEnd: {
        std::shared_ptr<WireHandler> handler = std::move(handler_);
        lock.unlock();
        Abort();  // the writer stops too
        handler->OnWireClosed(reason);
        return;
      }
    }
  }
  // More may be there: after the other connections' turn.
  lock.unlock();
  auto self = shared_from_this();
  boost::asio::post(IoContext(), [self] { self->OnReadable(); });
}

FrameWire::ReadResult FrameWire::ReadSome(std::string* reason) {
  Incoming& in = incoming_;
  while (in.header_got < kFrameHeaderSize) {
    ssize_t n = stream_->TryRead(in.header + in.header_got, kFrameHeaderSize - in.header_got);
    if (n == 0 && !aborted_) return ReadResult::kWouldBlock;
    if (n <= 0) {
      *reason = in.header_got == 0 ? "the connection ended" : "the connection ended inside a frame";
      return ReadResult::kEnd;
    }
    in.header_got += static_cast<size_t>(n);
    if (in.header_got == kFrameHeaderSize &&
        !DecodeFrameHeader(in.header, &in.frame.type, &in.length, reason)) {
      SIM_LOG_ERROR("malformed frame from %s: %s; closing the connection", peer().c_str(),
                    reason->c_str());
      *reason = "malformed frame: " + *reason;
      return ReadResult::kEnd;
    }
  }
  while (in.body_got < in.length) {
    // The body grows as its bytes arrive, a piece at a time.
    size_t piece = std::min<size_t>(kReadChunk, in.length - in.body_got);
    if (in.frame.body.size() < in.body_got + piece) in.frame.body.resize(in.body_got + piece);
    ssize_t n = stream_->TryRead(in.frame.body.data() + in.body_got,
                                 in.frame.body.size() - in.body_got);
    if (n == 0 && !aborted_) return ReadResult::kWouldBlock;
    if (n <= 0) {
      *reason = "the connection ended inside a frame";
      return ReadResult::kEnd;
    }
    in.body_got += static_cast<size_t>(n);
  }
  return ReadResult::kFrame;
}

void FrameWire::ArmWrite() {
  auto self = shared_from_this();
  boost::asio::post(IoContext(), [self] {
    self->stream_->AsyncWaitWritable([self] { self->OnWritable(); });
  });
}

void FrameWire::OnWritable() {
  bool shut_down = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    WriteResult result = aborted_ ? WriteResult::kBroken : WriteQueuedLocked();
    if (result == WriteResult::kFull) {
      // The stream is full again: wait for it.
      auto self = shared_from_this();
      stream_->AsyncWaitWritable([self] { self->OnWritable(); });
      return;
    }
    if (result == WriteResult::kBroken) {
      aborted_ = true;  // broken: the reader sees the end and tells the handler
      DropQueuedLocked();
      closing_ = true;
    }
    shut_down = FinishWritingLocked();
  }
  if (shut_down) stream_->Shutdown();
}

}  // namespace rpma_sim
