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

// The wires a thread's batches hold: wire(0 .. held - 1). Trivially destructible, as the
// counts are (send_batch.h).
struct HeldWires {
  using WireRef = std::shared_ptr<FrameWire>;

  WireRef& wire(int i) { return *std::launder(reinterpret_cast<WireRef*>(storage[i])); }

  alignas(WireRef) unsigned char storage[kMaxWires][sizeof(WireRef)];
};

thread_local HeldWires t_wires;

}  // namespace

void SendBatch::SendHeld() {
  if (turn_of_ != nullptr && turn_of_->queued_frames() > 0) Hold(turn_of_);
  if (counts_.depth > 1) return;
  // Each taken out before its push, which may hold more (none does today).
  while (counts_.held > 0) {
    const int last = --counts_.held;
    std::shared_ptr<FrameWire> wire = std::move(t_wires.wire(last));
    t_wires.wire(last).~shared_ptr();
    wire->Push();
  }
}

void SendBatch::Hold(FrameWire* wire) {
  for (int i = 0; i < counts_.held; ++i)
    if (t_wires.wire(i).get() == wire) return;
  if (counts_.held == kMaxWires) return wire->Push();
  new (t_wires.storage[counts_.held]) std::shared_ptr<FrameWire>(wire->shared_from_this());
  ++counts_.held;
}

}  // namespace rpma_sim
