// connect_gate.h -- the seam every connection request passes: where it is made (the client)
// and where it arrives (the server).
//
// Fault injection installs a gate here to make a request end as if the server rejected it
// (RPMA_CONN_REJECTED) or as if its address never answered (RPMA_CONN_UNREACHABLE, after
// the connection's timeout). With no gate installed a request costs one atomic load here.
#ifndef RPMA_SIM_CM_CONNECT_GATE_H_
#define RPMA_SIM_CM_CONNECT_GATE_H_

#include <memory>

#include "sim/common/gate_slot.h"

namespace rpma_sim {

enum class ConnectVerdict { kProceed, kReject, kUnreachable };

class ConnectGate {
 public:
  virtual ~ConnectGate() = default;

  // What becomes of a connection request: `server` is false where it is made, true where
  // it arrives (only kProceed and kReject make sense there). Called without the CM lock.
  virtual ConnectVerdict Check(bool server) = 0;
};

extern GateSlot<ConnectGate> g_connect_gate_slot;
inline void SetConnectGate(std::shared_ptr<ConnectGate> gate) {
  g_connect_gate_slot.Set(std::move(gate));
}

inline ConnectVerdict CheckConnect(bool server) {
  if (!g_connect_gate_slot.installed()) return ConnectVerdict::kProceed;
  std::shared_ptr<ConnectGate> gate = g_connect_gate_slot.Get();
  return gate ? gate->Check(server) : ConnectVerdict::kProceed;
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CONNECT_GATE_H_
