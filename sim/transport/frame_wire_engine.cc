// frame_wire_engine.cc -- reading and writing a wire's stream, with no thread of its own.
// The progress engine waits until the stream is readable, reads what arrived into the frame
// being assembled, hands each whole frame to the handler, and waits again; what Send could
// not write at once leaves when the stream is writable again. An application that polls
// its completion queue does the same on its own thread (DeliverArrived, SendQueued), so
// that it need not wait for the engine's thread to be scheduled.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <errno.h>
#include <string.h>

#include <algorithm>
#include <chrono>

#include "sim/common/happens_before.h"
#include "sim/common/log.h"
#include "sim/common/mutex.h"
#include "sim/fabric/io_service.h"
#include "sim/transport/frame_wire.h"

namespace rpma_sim {
namespace {

// Bodies are read in pieces of at most this size, so a peer that announces a large frame
// must really send it before the memory is taken. It is also what one turn of reading
// takes at most, so that a fast peer's large frames keep neither the engine from the other
// connections nor a polling application from its completions.
constexpr size_t kReadChunk = 4 << 20;

// What one call hands the stream at most of a frame whose payload it reads in place: the
// payload's owner holds a lock meanwhile (a registered region's, which rpma_mr_reg and
// rpma_mr_dereg wait for), so a fast reader does not keep it for a 1 GiB payload. The rest
// goes when the stream is writable again, at once if it still is.
constexpr size_t kWriteChunk = 4 << 20;

// Frames handled in one turn before the engine lets other connections' work run.
constexpr int kFramesPerTurn = 32;

// Frames a polling application handles in one call.
constexpr int kFramesPerPoll = 16;

// While an application keeps reading with DeliverArrived, the engine looks again this late
// instead of at once: each look costs a context switch on the poller's cores.
constexpr auto kPollerActive = std::chrono::milliseconds(1);

// Grows a body being read to `size` bytes, of `length` in all: at once to the whole frame
// up to kReadChunk, by doublings beyond, so a frame takes memory only as its bytes arrive.
void GrowBody(FrameBody* body, size_t size, size_t length) {
  if (size > body->capacity())
    body->reserve(std::min(length, std::max({size, 2 * body->capacity(), kReadChunk})));
  body->resize(size);
}

// Writes to `out` the parts of `parts` that remain after its first `skip` bytes; returns
// how many.
int PartsAfter(const iovec* parts, int count, size_t skip, iovec* out) {
  int written = 0;
  for (int i = 0; i < count; ++i) {
    if (skip >= parts[i].iov_len) {
      skip -= parts[i].iov_len;
      continue;
    }
    out[written].iov_base = static_cast<uint8_t*>(parts[i].iov_base) + skip;
    out[written].iov_len = parts[i].iov_len - skip;
    skip = 0;
    ++written;
  }
  return written;
}

}  // namespace

void FrameWire::Start(std::shared_ptr<WireHandler> handler) {
  EnsureProgressEngine();
  BeginReading(std::move(handler));
}

void FrameWire::StartOnEngine(std::shared_ptr<WireHandler> handler) {
  EnsureProgressEngine();
  auto self = shared_from_this();
  // On the engine's thread, where the handler is taken under read_mutex_ without the
  // caller's locks held.
  boost::asio::post(IoContext(), [self, handler = std::move(handler)]() mutable {
    self->BeginReading(std::move(handler));
  });
}

void FrameWire::BeginReading(std::shared_ptr<WireHandler> handler) {
  {
    MutexLock lock(&read_mutex_);
    handler_ = std::move(handler);
  }
  // The stream's first wait; every later one begins on the engine, after the one before
  // ended there, so a socket's waits are never started from two threads at once.
  auto self = shared_from_this();
  stream_->AsyncWaitReadable([self] { self->OnReadable(); });
}

void FrameWire::OnReadable() {
  uint64_t polls = polls_.load(std::memory_order_relaxed);
  if (polls != polls_seen_ && !aborted_) {
    // An application is reading the stream itself: leave it to it for a while, and let
    // what arrives meanwhile not wake the engine.
    polls_seen_ = polls;
    stream_->Unwatch();
    auto timer = std::make_shared<boost::asio::steady_timer>(IoContext(), kPollerActive);
    auto self = shared_from_this();
    timer->async_wait([self, timer](const boost::system::error_code&) { self->OnReadable(); });
    return;
  }
  SendBatch answers(this);  // what the turn's frames send leaves after it, together
  engine_waiting_.store(true, std::memory_order_relaxed);
  ReleasableMutexLock lock(&read_mutex_);
  engine_waiting_.store(false, std::memory_order_relaxed);
  if (!handler_) return;  // the wire ended already
  std::string reason;
  size_t budget = kReadChunk;
  for (int frames = 0; frames < kFramesPerTurn; ++frames) {
    ReadResult result = ReadSome(ReadAhead::kYes, &budget, &reason);
    if (result == ReadResult::kWouldBlock) {
      lock.Release();
      auto self = shared_from_this();
      stream_->AsyncWaitReadable([self] { self->OnReadable(); });
      return;
    }
    if (result == ReadResult::kEnd) {
      std::shared_ptr<WireHandler> handler = TakeHandlerLocked();
      lock.Release();
      return EndReading(handler, reason);
    }
    if (result == ReadResult::kPaused) break;
    HandOver();
    // What the frames read so far sent goes before a read that is a system call; from
    // memory (a ring), the turn's answers go together at its end.
    if (NextReadIsSystemCall()) answers.SendHeld();
  }
  // More may be there: after the other connections' turn.
  lock.Release();
  auto self = shared_from_this();
  boost::asio::post(IoContext(), [self] { self->OnReadable(); });
}

void FrameWire::DeliverArrived() {
  if (engine_waiting_.load(std::memory_order_relaxed)) return;
  SendBatch answers(this);  // what the frames taken send leaves after this call, together
  if (!read_mutex_.TryLock()) return;
  // A frame still arriving (a large one over TCP is, for most of its time) is read as far as
  // it came; the engine or the next call goes on from there.
  std::string reason;
  size_t budget = kReadChunk;
  bool progressed = false;
  for (int frames = 0; handler_; ++frames) {
    size_t before = incoming_.header_got + incoming_.body_got;
    // Past kFramesPerPoll frames, only those already read ahead: they would wait for the
    // next call, and the engine, which waits for the stream, would not see them. (A frame
    // read in part is left: the rest of it wakes the engine when it arrives.)
    ReadResult result = ReadSome(
        frames < kFramesPerPoll ? ReadAhead::kYes : ReadAhead::kBufferedOnly, &budget, &reason);
    progressed |= incoming_.header_got + incoming_.body_got != before;
    if (result == ReadResult::kEnd) {
      std::shared_ptr<WireHandler> handler = TakeHandlerLocked();
      read_mutex_.Unlock();
      return EndReading(handler, reason);
    }
    if (result != ReadResult::kFrame) break;
    progressed = true;
    HandOver();
    if (NextReadIsSystemCall()) answers.SendHeld();  // as the engine does
  }
  read_mutex_.Unlock();
  // A poller that reads makes the engine step aside. (A server busy-polling during 1 MiB
  // writes over TCP otherwise had the engine's thread beside it for the same cores, or,
  // when it left frames still arriving to the engine, waited 1 ms for each: 0.2-0.3 GiB/s
  // instead of 2-3.)
  if (progressed) polls_.fetch_add(1, std::memory_order_relaxed);
}

void FrameWire::HandOver() {
  Frame frame = std::move(incoming_.frame);
  incoming_ = Incoming();
  SIM_HAPPENS_AFTER(&g_frames_handed_over);
  handler_->OnFrame(std::move(frame));
}

FrameWire::ReadResult FrameWire::ReadSome(ReadAhead ahead, size_t* budget, std::string* reason) {
  if (malformed_) {  // what the peer sent after a malformed message is not read
    *reason = "a malformed message";
    return ReadResult::kEnd;
  }
  Incoming& in = incoming_;
  while (in.header_got < kFrameHeaderSize) {
    ssize_t n = Pull(ahead, in.header + in.header_got, kFrameHeaderSize - in.header_got);
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
    if (*budget == 0) return ReadResult::kPaused;
    // The body grows as its bytes arrive, a piece at a time.
    size_t piece = std::min({kReadChunk, *budget, in.length - in.body_got});
    if (in.frame.body.size() < in.body_got + piece)
      GrowBody(&in.frame.body, in.body_got + piece, in.length);
    ssize_t n = Pull(ahead, in.frame.body.data() + in.body_got, piece);
    if (n == 0 && !aborted_) return ReadResult::kWouldBlock;
    if (n <= 0) {
      *reason = "the connection ended inside a frame";
      return ReadResult::kEnd;
    }
    in.body_got += static_cast<size_t>(n);
    *budget -= static_cast<size_t>(n);
  }
  return ReadResult::kFrame;
}

ssize_t FrameWire::Pull(ReadAhead ahead, uint8_t* data, size_t size) {
  if (ahead_begin_ == ahead_end_) {
    if (ahead == ReadAhead::kBufferedOnly) return 0;
    const size_t capacity = stream_->ReadAheadBytes();
    // Large pieces go straight into the frame: no second copy.
    if (size >= capacity) return stream_->TryRead(data, size);
    if (!ahead_) ahead_.reset(new uint8_t[capacity]);
    ssize_t n = stream_->TryRead(ahead_.get(), capacity);
    if (n <= 0) return n;
    ahead_begin_ = 0;
    ahead_end_ = static_cast<size_t>(n);
  }
  size_t taken = std::min(size, ahead_end_ - ahead_begin_);
  memcpy(data, ahead_.get() + ahead_begin_, taken);
  ahead_begin_ += taken;
  return static_cast<ssize_t>(taken);
}

void FrameWire::SendQueued() {
  if (queued_frames() == 0) return;
  if (!mutex_.TryLock()) return;
  bool shut_down = false;
  if (!writing_) {
    shut_down = PushLocked();
  } else if (!aborted_ && WriteQueuedLocked() == WriteResult::kBroken) {
    // The engine still waits for the stream to take more (writing_), and finds the queue
    // as this leaves it.
    BreakLocked();
    shut_down = true;
  }
  mutex_.Unlock();
  if (shut_down) stream_->Shutdown();
}

FrameWire::WriteResult FrameWire::WriteQueuedLocked() {
  while (!outbound_.empty()) {
    // The frames of one write: the first alone if it has a payload (read in place, under
    // its owner's lock), else every frame up to the next that has one, at most
    // kFramesPerWrite.
    size_t count = 1;
    if (!outbound_.front().payload) {
      while (count < outbound_.size() && count < kFramesPerWrite && !outbound_[count].payload)
        ++count;
    }
    // Not counted from before the write that may finish them: a peer that reads one may
    // answer at once, and its next request must not find it still counted here.
    size_t body_bytes = 0;
    for (size_t i = 0; i < count; ++i) body_bytes += outbound_[i].body_size;
    queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) - body_bytes,
                        std::memory_order_relaxed);
    bool written =
        outbound_.front().payload ? WriteWithPayload(&outbound_.front()) : WriteFrames(count);
    if (!written) return WriteResult::kBroken;  // the caller breaks the wire
    size_t whole = 0;
    while (whole < count && outbound_[whole].sent == kFrameHeaderSize + outbound_[whole].body_size)
      ++whole;
    size_t still_queued = 0;
    for (size_t i = whole; i < count; ++i) still_queued += outbound_[i].body_size;
    queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) + still_queued,
                        std::memory_order_relaxed);
    outbound_.erase(outbound_.begin(), outbound_.begin() + static_cast<long>(whole));
    queued_frames_.store(outbound_.size(), std::memory_order_relaxed);
    if (whole < count) return WriteResult::kFull;
  }
  return WriteResult::kDrained;
}

bool FrameWire::WriteFrames(size_t count) {
  iovec parts[2 * kFramesPerWrite] = {};
  uint8_t headers[kFramesPerWrite][kFrameHeaderSize];
  int part_count = 0;
  for (size_t i = 0; i < count; ++i) {
    const Outgoing& out = outbound_[i];
    EncodeFrameHeader(out.type, static_cast<uint32_t>(out.body_size), headers[i]);
    const iovec frame[2] = {{headers[i], kFrameHeaderSize},
                            {const_cast<uint8_t*>(out.body.data()), out.body.size()}};
    part_count +=
        PartsAfter(frame, 2, out.sent, parts + part_count);  // only the first left in part
  }
  ssize_t n = stream_->Write(parts, part_count);
  if (n < 0) return false;
  size_t taken = static_cast<size_t>(n);
  for (size_t i = 0; i < count && taken > 0; ++i) {
    Outgoing& out = outbound_[i];
    size_t piece = std::min(taken, kFrameHeaderSize + out.body_size - out.sent);
    out.sent += piece;
    taken -= piece;
  }
  return true;
}

bool FrameWire::WriteWithPayload(Outgoing* out) {
  for (;;) {
    PartsWritten result = PartsWritten::kBroken;  // if the payload could not give its bytes
    out->payload->WriteWith([this, out, &result](const iovec* parts, int count) {
      result = WriteParts(out, parts, count);
      return result == PartsWritten::kWritten;
    });
    if (result != PartsWritten::kUnreadable) return result == PartsWritten::kWritten;
    // From where the stream stopped, the payload gives what stands in for the bytes (and
    // tells the peer), or the frame cannot go on.
    if (!out->payload->GiveUpBytes()) {
      SIM_LOG_ERROR("a frame's payload to %s cannot be read; closing the connection",
                    peer().c_str());
      return false;
    }
  }
}

FrameWire::PartsWritten FrameWire::WriteParts(Outgoing* out, const iovec* payload,
                                              int payload_count) {
  constexpr int kFrameParts = 2 + FramePayload::kMaxParts;  // header, body, payload
  size_t payload_size = 0;
  for (int i = 0; i < payload_count; ++i) payload_size += payload[i].iov_len;
  if (payload_count > FramePayload::kMaxParts ||
      out->body.size() + payload_size != out->body_size) {
    SIM_LOG_ERROR("a frame's payload to %s is not the size it announced; closing the connection",
                  peer().c_str());
    return PartsWritten::kBroken;
  }
  uint8_t header[kFrameHeaderSize];
  EncodeFrameHeader(out->type, static_cast<uint32_t>(out->body_size), header);
  iovec parts[kFrameParts] = {{header, sizeof(header)}, {out->body.data(), out->body.size()}};
  int part_count = 2;
  for (int i = 0; i < payload_count; ++i) parts[part_count++] = payload[i];
  size_t total = sizeof(header) + out->body_size;
  size_t& sent = out->sent;
  size_t written = 0;
  while (sent < total && (payload_count == 0 || written < kWriteChunk)) {
    iovec remaining[kFrameParts];
    int count = PartsAfter(parts, part_count, sent, remaining);
    ssize_t n = stream_->WriteFromApplication(remaining, count);
    if (n < 0) return errno == EFAULT ? PartsWritten::kUnreadable : PartsWritten::kBroken;
    if (n == 0) return PartsWritten::kWritten;
    sent += static_cast<size_t>(n);
    written += static_cast<size_t>(n);
  }
  return PartsWritten::kWritten;
}

void FrameWire::ArmWrite() {
  auto self = shared_from_this();
  boost::asio::post(IoContext(),
                    [self] { self->stream_->AsyncWaitWritable([self] { self->OnWritable(); }); });
}

void FrameWire::OnWritable() {
  bool shut_down = false;
  {
    MutexLock lock(&mutex_);
    WriteResult result = aborted_ ? WriteResult::kBroken : WriteQueuedLocked();
    if (result == WriteResult::kFull) {
      // The stream is full again: wait for it.
      auto self = shared_from_this();
      stream_->AsyncWaitWritable([self] { self->OnWritable(); });
      return;
    }
    if (result == WriteResult::kBroken) BreakLocked();
    shut_down = FinishWritingLocked();
  }
  if (shut_down) stream_->Shutdown();
}

}  // namespace rpma_sim
