// send_batch.cc -- the wires a thread's open batch holds frames for.
#include "sim/transport/send_batch.h"

#include <new>
#include <utility>

#include "sim/transport/frame_wire.h"

namespace rpma_sim {
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
  SendHeld();
  --t_batch.depth;
}

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

bool SendBatch::Open() { return t_batch.depth > 0; }

void SendBatch::Hold(FrameWire* wire) {
  for (int i = 0; i < t_batch.held; ++i)
    if (t_batch.wire(i).get() == wire) return;
  if (t_batch.held == kMaxWires) return wire->Push();
  new (t_batch.storage[t_batch.held]) std::shared_ptr<FrameWire>(wire->shared_from_this());
  ++t_batch.held;
}

}  // namespace rpma_sim
