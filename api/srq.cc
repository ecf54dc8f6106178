// srq.cc -- rpma_srq_*: a shared receive queue, its optional receive CQ, and posting to it.
#include <librpma.h>

#include <new>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/librpma_points.h"
#include "api/receive_request.h"
#include "api/status_map.h"
#include "api/types.h"

int rpma_srq_new(struct rpma_peer* peer, struct rpma_srq_cfg* cfg, struct rpma_srq** srq_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_new");
  if (peer == nullptr || srq_ptr == nullptr) return RPMA_E_INVAL;
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  rpma_srq_cfg defaults;
  const rpma_srq_cfg& sizes = cfg != nullptr ? *cfg : defaults;
  (void)RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_srq_cfg_get_rq_size");  // librpma ignores these
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_peer_create_srq");
  (void)RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_srq_cfg_get_rcq_size");
  if (sizes.rcq_size > 0) {
    int code = PointsCqNew(CqChannel::kOwn);
    if (code != 0) return code;
  }
  if (RPMA_FAULT_FIRES(RPMA_E_NOMEM, "rpma_srq_new")) {
    if (sizes.rcq_size > 0) (void)PointsCqDelete();
    return RPMA_E_NOMEM;
  }
  auto* srq = new (std::nothrow) rpma_srq;
  if (srq == nullptr) return RPMA_E_NOMEM;
  rpma_sim::Status status =
      rpma_sim::SharedReceiveQueue::Create(peer->pd, sizes.rq_size, sizes.rcq_size, &srq->srq);
  if (status != rpma_sim::Status::kOk) {
    delete srq;
    return ToRpmaError(status);
  }
  srq->peer = peer;
  if (srq->srq->rcq()) {
    srq->rcq = std::make_unique<rpma_cq>();
    srq->rcq->cq = srq->srq->rcq();
  }
  *srq_ptr = srq;
  return 0;
}

int rpma_srq_delete(struct rpma_srq** srq_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_srq_delete(srq_ptr));  // frees it whatever the result
  if (srq_ptr == nullptr) return RPMA_E_INVAL;
  rpma_srq* srq = *srq_ptr;
  if (srq == nullptr) return 0;
  if (Inherited(*srq, __func__, "shared RQ")) {
    KeepInherited(srq);  // the parent's connections still receive through it
    *srq_ptr = nullptr;
    return RPMA_E_PROVIDER;
  }
  // ibv_destroy_srq fails with EBUSY while queue pairs still use the SRQ; freed anyway.
  bool had_rcq = srq->rcq != nullptr;
  int ret = srq->srq->InUse() ? RPMA_E_PROVIDER : 0;
  srq->srq->Destroy();
  delete srq;
  *srq_ptr = nullptr;
  int rcq_deleted = had_rcq ? PointsCqDelete() : 0;
  if (ret == 0) ret = rcq_deleted;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_srq_delete");
  return ret;
}

int rpma_srq_recv(struct rpma_srq* srq, struct rpma_mr_local* dst, size_t offset, size_t len,
                  const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_recv");
  if (srq == nullptr || (dst == nullptr && (offset != 0 || len != 0))) return RPMA_E_INVAL;
  if (Inherited(*srq, __func__, "shared RQ") ||
      (dst != nullptr && Inherited(*dst, __func__, "registered memory")))
    return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_srq_recv");
  return ToRpmaError(srq->srq->PostReceive(MakeReceiveRequest(dst, offset, len, op_context)));
}

int rpma_srq_get_rcq(const struct rpma_srq* srq, struct rpma_cq** rcq_ptr) {
  RPMA_API_PROLOGUE();
  if (srq == nullptr || rcq_ptr == nullptr) return RPMA_E_INVAL;
  *rcq_ptr = srq->rcq.get();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_get_rcq");
  return 0;
}
