// call_seam.cc -- the process's CallGate slot.
#include "sim/common/call_seam.h"

namespace rpma_sim {

GateSlot<CallGate>& CallGateSlot() {
  static GateSlot<CallGate>* slot = new GateSlot<CallGate>();
  return *slot;
}

}  // namespace rpma_sim
