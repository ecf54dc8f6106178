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
#include "sim/verbs/connection_tag.h"

namespace rpma_sim {

enum class ConnectVerdict { kProceed, kReject, kUnreachable };

class ConnectGate {
 public:
  virtual ~ConnectGate() = default;

  // What becomes of a connection request on `side`: the client where it is made, the server
  // where it arrives (only kProceed and kReject make sense there). The client's call is
  // made without the CM lock; the server's, in process, under it (a wire's, without).
  virtual ConnectVerdict Check(ConnectionSide side) = 0;
};

extern GateSlot<ConnectGate> g_connect_gate_slot;
inline void SetConnectGate(std::shared_ptr<ConnectGate> gate) {
  g_connect_gate_slot.Set(std::move(gate));
}

inline ConnectVerdict CheckConnect(ConnectionSide side) {
  if (!g_connect_gate_slot.installed()) return ConnectVerdict::kProceed;
  std::shared_ptr<ConnectGate> gate = g_connect_gate_slot.Get();
  return gate ? gate->Check(side) : ConnectVerdict::kProceed;
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CONNECT_GATE_H_
