// sim_config.cc -- rpma_sim.h: the simulated device's capabilities and the transport at run
// time (sim/fabric/config.h).
#include <rpma_sim.h>

#include "sim/fabric/config.h"

namespace {

bool* CapField(rpma_sim::DeviceCaps* caps, int cap) {
  switch (cap) {
    case RPMA_SIM_CAP_PERSISTENT_MEMORY:
      return &caps->persistent_memory;
    case RPMA_SIM_CAP_NATIVE_FLUSH:
      return &caps->native_flush;
    case RPMA_SIM_CAP_NATIVE_ATOMIC_WRITE:
      return &caps->native_atomic_write;
    case RPMA_SIM_CAP_ODP:
      return &caps->on_demand_paging;
    case RPMA_SIM_CAP_EADR:
      return &caps->eadr;
    case RPMA_SIM_CAP_FLUSH_SCOPE_QP:
      return &caps->flush_scope_qp;
  }
  return nullptr;
}

}  // namespace

int rpma_sim_set_device_cap(enum rpma_sim_device_cap cap, bool enabled) {
  rpma_sim::DeviceCaps caps = rpma_sim::GetDeviceCaps();
  bool* field = CapField(&caps, cap);
  if (field == nullptr) return RPMA_E_INVAL;
  *field = enabled;
  rpma_sim::SetDeviceCaps(caps);
  return 0;
}

int rpma_sim_get_device_cap(enum rpma_sim_device_cap cap, bool* enabled) {
  rpma_sim::DeviceCaps caps = rpma_sim::GetDeviceCaps();
  bool* field = CapField(&caps, cap);
  if (field == nullptr || enabled == nullptr) return RPMA_E_INVAL;
  *enabled = *field;
  return 0;
}

int rpma_sim_set_transport(enum rpma_sim_transport transport) {
  switch (transport) {
    case RPMA_SIM_TRANSPORT_AUTO:
      rpma_sim::SetTransport(rpma_sim::TransportKind::kAuto);
      break;
    case RPMA_SIM_TRANSPORT_INPROC:
      rpma_sim::SetTransport(rpma_sim::TransportKind::kInproc);
      break;
    case RPMA_SIM_TRANSPORT_SHM:
      rpma_sim::SetTransport(rpma_sim::TransportKind::kShm);
      break;
    case RPMA_SIM_TRANSPORT_TCP:
      rpma_sim::SetTransport(rpma_sim::TransportKind::kTcp);
      break;
    default:
      return RPMA_E_INVAL;
  }
  return 0;
}

int rpma_sim_get_transport(enum rpma_sim_transport* transport) {
  if (transport == nullptr) return RPMA_E_INVAL;
  switch (rpma_sim::GetTransport()) {
    case rpma_sim::TransportKind::kAuto:
      *transport = RPMA_SIM_TRANSPORT_AUTO;
      break;
    case rpma_sim::TransportKind::kInproc:
      *transport = RPMA_SIM_TRANSPORT_INPROC;
      break;
    case rpma_sim::TransportKind::kShm:
      *transport = RPMA_SIM_TRANSPORT_SHM;
      break;
    case rpma_sim::TransportKind::kTcp:
      *transport = RPMA_SIM_TRANSPORT_TCP;
      break;
  }
  return 0;
}
