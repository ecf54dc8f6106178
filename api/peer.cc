// peer.cc -- rpma_peer_new / rpma_peer_delete: a protection domain on the simulated device,
// which is also a node of the fabric (rpma_sim_node_fail).
#include <librpma.h>
#include <rpma_sim.h>

#include <errno.h>

#include <new>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/fabric/device.h"
#include "sim/fault/fault_plan.h"

int rpma_peer_new(struct ibv_context* ibv_ctx, struct rpma_peer** peer_ptr) {
  // RPMA_SIM_FAULTS is read first, so that its rules already apply to this call; a plan
  // that was not understood (logged) fails every peer: nothing runs under it.
  if (rpma_sim::FaultPlan::Get().LoadEnvironmentOnce() != rpma_sim::Status::kOk)
    return RPMA_E_INVAL;
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_new");
  if (ibv_ctx == nullptr || peer_ptr == nullptr) return RPMA_E_INVAL;
  // The device's capabilities, then the protection domain (librpma's order).
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_utils_ibv_context_is_atomic_write_capable");
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_utils_ibv_context_is_flush_capable");
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_utils_ibv_context_is_odp_capable");
  if (RPMA_FAULT_FIRES(RPMA_E_NOMEM, "rpma_peer_new")) {
    errno = ENOMEM;
    return RPMA_E_NOMEM;
  }
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_peer_new");
  RPMA_FAULT_POINT(RPMA_E_UNKNOWN, "rpma_peer_new");
  rpma_sim::Device* device = rpma_sim::Device::FromContext(ibv_ctx);
  if (device == nullptr) return RPMA_E_PROVIDER;  // the capability query fails
  RPMA_FAULT_POINT(RPMA_E_NOMEM, "rpma_peer_new");
  auto* peer = new (std::nothrow) rpma_peer;
  if (peer == nullptr) return RPMA_E_NOMEM;
  rpma_sim::Status status = rpma_sim::ProtectionDomain::Allocate(device, &peer->pd);
  if (status != rpma_sim::Status::kOk) {
    delete peer;
    return ToRpmaError(status);
  }
  *peer_ptr = peer;
  return 0;
}

int rpma_peer_delete(struct rpma_peer** peer_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_peer_delete(peer_ptr));  // frees it whatever the result
  if (peer_ptr == nullptr) return RPMA_E_INVAL;
  rpma_peer* peer = *peer_ptr;
  if (peer == nullptr) return 0;
  if (Inherited(*peer, __func__, "peer")) {
    KeepInherited(peer);  // the parent's protection domain stays
    *peer_ptr = nullptr;
    return RPMA_E_PROVIDER;
  }
  // Like librpma after ibv_dealloc_pd fails with EBUSY, the peer is freed anyway; objects
  // created from it hold the domain and keep working until they are deleted.
  int ret = peer->pd->Deallocate() == rpma_sim::Status::kOk ? 0 : RPMA_E_PROVIDER;
  delete peer;
  *peer_ptr = nullptr;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_peer_delete");
  return ret;
}

int rpma_sim_node_fail(struct rpma_peer* peer) {
  if (peer == nullptr) return RPMA_E_INVAL;
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  peer->pd->node()->Fail();
  return 0;
}
