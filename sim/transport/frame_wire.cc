// frame_wire.cc -- queueing frames, closing and breaking a wire, and waiting until what was
// queued left; a thread's batch of held frames. (Reading and writing the stream:
// frame_wire_engine.cc.)
#include "sim/transport/frame_wire.h"

#include <chrono>
#include <new>
#include <utility>

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

bool FrameWire::Send(FrameType type, std::vector<uint8_t> body,
                     std::shared_ptr<FramePayload> payload, Urgency urgency) {
  return Queue(type, std::move(body), std::move(payload), urgency, nullptr);
}

bool FrameWire::SendMerging(FrameType type, std::vector<uint8_t> body, MergeBodies merge) {
  return Queue(type, std::move(body), nullptr, Urgency::kNow, merge);
}

bool FrameWire::MergedLocked(FrameType type, const std::vector<uint8_t>& body, MergeBodies merge) {
  if (merge == nullptr || outbound_.empty()) return false;
  // Untouched: no write took any of it (writes run under mutex_, so none is under way).
  Outgoing& last = outbound_.back();
  if (last.merge != merge || last.type != type || last.sent != 0) return false;
  const size_t before = last.body.size();
  if (!merge(&last.body, body)) return false;
  last.body_size = last.body.size();
  queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) - before + last.body_size,
                      std::memory_order_relaxed);
  return true;
}

bool FrameWire::Queue(FrameType type, std::vector<uint8_t> body,
                      std::shared_ptr<FramePayload> payload, Urgency urgency, MergeBodies merge) {
  SIM_HAPPENS_BEFORE(&g_frames_handed_over);
  size_t body_size = body.size() + (payload ? payload->size() : 0);
  const bool batched = SendBatch::Open();
  bool broken = false;
  {
    MutexLock lock(&mutex_);
    if (closing_) return false;
    if (!MergedLocked(type, body, merge)) {
      queued_bytes_.store(queued_bytes_.load(std::memory_order_relaxed) + body_size,
                          std::memory_order_relaxed);
      outbound_.push_back(Outgoing{type, std::move(body), std::move(payload), body_size, 0, merge});
      queued_frames_.store(outbound_.size(), std::memory_order_relaxed);
    }
    // It waits for the next write, up to a write's worth of frames, where writes are
    // system calls.
    if (urgency == Urgency::kWithNextWrite && outbound_.size() < kFramesPerWrite &&
        stream_->WritesAreSystemCalls())
      return true;
    // Sent right here without waiting (no thread hop) unless a batch holds it; whatever the
    // stream does not take now is left to the engine (or to a polling application,
    // SendQueued).
    if (!batched) broken = PushLocked();
  }
  if (batched) SendBatch::Hold(this);
  if (!broken) return true;
  stream_->Shutdown();
  return false;
}

void FrameWire::Push() {
  bool shut_down;
  {
    MutexLock lock(&mutex_);
    shut_down = PushLocked();
  }
  if (shut_down) stream_->Shutdown();
}

bool FrameWire::PushLocked() {
  if (writing_ || writer_done_) return false;  // the engine sends the rest, or all is over
  if (!outbound_.empty()) {
    WriteResult result = WriteQueuedLocked();
    if (result == WriteResult::kFull) {
      writing_ = true;
      ArmWrite();
      return false;
    }
    if (result == WriteResult::kBroken) {
      BreakLocked();
      return true;
    }
  }
  return FinishWritingLocked();
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
    MutexLock lock(&mutex_);
    closing_ = true;
    // An idle wire closes once it sent what it holds; one the engine writes, once its
    // queue drained.
    shut_down = PushLocked();
  }
  if (shut_down) stream_->Shutdown();  // the reader sees the end and tells the handler
}

bool FrameWire::FinishWritingLocked() {
  writing_ = false;
  if (closing_) writer_done_ = true;
  drained_.SignalAll();
  return closing_;
}

void FrameWire::Abort() {
  {
    MutexLock lock(&mutex_);
    BreakLocked();  // what waits for the next write, or in a batch, is dropped, not sent
  }
  Close();
  stream_->Shutdown();
}

void FrameWire::AbortMalformed(const std::string& what) {
  SIM_LOG_ERROR("malformed message from %s: %s; closing the connection", peer().c_str(),
                what.c_str());
  AbortAfterMalformed();
}

void FrameWire::AbortAfterMalformed() {
  malformed_ = true;
  aborted_ = true;  // the engine writes no more once the socket is full
  Close();
  stream_->Shutdown();
}

std::shared_ptr<WireHandler> FrameWire::TakeHandlerLocked() { return std::move(handler_); }

void FrameWire::EndReading(const std::shared_ptr<WireHandler>& handler, const std::string& reason) {
  Abort();  // the writer stops too
  if (handler) handler->OnWireClosed(reason);
}

bool FrameWire::Flush(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Push();  // what a batch of this thread holds, or what waits for the next write, leaves now
  MutexLock lock(&mutex_);
  while (!writer_done_ && !(outbound_.empty() && !writing_)) {
    if (!drained_.WaitUntil(&mutex_, deadline))
      return writer_done_ || (outbound_.empty() && !writing_);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// SendBatch
namespace {

// The wires one batch holds at most: a turn's or a queue pair's connection, and the few
// others its frames answer on. A wire beyond them sends at once, as without a batch.
constexpr int kMaxWires = 16;

// A thread's batches. Trivially destructible, so that no thread registers a destructor for
// it: a fork child would inherit the other threads' registrations and never run them.
struct ThreadBatch {
  using WireRef = std::shared_ptr<FrameWire>;

  WireRef& wire(int i) { return *std::launder(reinterpret_cast<WireRef*>(storage[i])); }

  int depth;  // batches open on this thread, nested
  int held;   // wires holding frames, each once: wire(0 .. held - 1)
  alignas(WireRef) unsigned char storage[kMaxWires][sizeof(WireRef)];
};

thread_local ThreadBatch t_batch;

}  // namespace

SendBatch::SendBatch(FrameWire* turn_of) : turn_of_(turn_of) { ++t_batch.depth; }

SendBatch::~SendBatch() {
  // Nothing to send: the common case of a direct execution's lock.
  if (turn_of_ != nullptr || t_batch.held > 0) SendHeld();
  --t_batch.depth;
}

bool SendBatch::Open() { return t_batch.depth > 0; }

void SendBatch::SendHeld() {
  if (turn_of_ != nullptr && turn_of_->queued_frames() > 0) Hold(turn_of_);
  if (t_batch.depth > 1) return;
  // Each taken out before its push, which may hold more (none does today).
  while (t_batch.held > 0) {
    const int last = --t_batch.held;
    std::shared_ptr<FrameWire> wire = std::move(t_batch.wire(last));
    t_batch.wire(last).~shared_ptr();
    wire->Push();
  }
}

void SendBatch::Hold(FrameWire* wire) {
  for (int i = 0; i < t_batch.held; ++i)
    if (t_batch.wire(i).get() == wire) return;
  if (t_batch.held == kMaxWires) return wire->Push();
  new (t_batch.storage[t_batch.held]) std::shared_ptr<FrameWire>(wire->shared_from_this());
  ++t_batch.held;
}

}  // namespace rpma_sim
