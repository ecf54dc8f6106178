// call_seam.cc -- the process's CallGate slot.
#include "sim/common/call_seam.h"

#include <type_traits>

namespace rpma_sim {

GateSlot<CallGate> g_call_gate_slot;

namespace {
thread_local int internal_calls = 0;  // InternalCall scopes alive on this thread
}  // namespace

InternalCall::InternalCall() { ++internal_calls; }
InternalCall::~InternalCall() { --internal_calls; }
bool InternalCall::active() { return internal_calls > 0; }

Status CheckInstalledCallGate(const char* function) {
  if (InternalCall::active()) return Status::kOk;
  std::shared_ptr<CallGate> gate = g_call_gate_slot.Get();
  return gate ? gate->Check(function) : Status::kOk;
}

// Never destroyed, so usable by threads still running while the process exits.
static_assert(std::is_trivially_destructible<GateSlot<CallGate>>::value,
              "a gate slot must not need a destructor");

}  // namespace rpma_sim
