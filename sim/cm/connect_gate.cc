// connect_gate.cc -- the process's ConnectGate slot.
#include "sim/cm/connect_gate.h"

namespace rpma_sim {

GateSlot<ConnectGate> g_connect_gate_slot;

}  // namespace rpma_sim
