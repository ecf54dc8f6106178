// librpma_points.cc -- the fault points of librpma's internal functions, in its order.
#include "api/librpma_points.h"

#include "api/types.h"
#include "sim/common/call_seam.h"
#include "sim/fabric/config.h"

namespace {

// A point whose code its caller ignores (librpma's `(void)` calls of its own getters and
// deleters): it counts and prints, and nothing fails.
void PassIgnored(int code, const char* function) { (void)RPMA_FAULT_FIRES(code, function); }

// Keeps the first error of a clean-up that goes on whatever fails.
void Keep(int* first, int code) {
  if (*first == 0) *first = code;
}

}  // namespace

int PointsInfoNew() {
  return RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_info_new") ? RPMA_E_PROVIDER : 0;
}

void PointsInfoDelete() { PassIgnored(RPMA_E_INVAL, "rpma_info_delete"); }

int PointsCqNew(CqChannel channel) {
  if (channel == CqChannel::kOwn && RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_cq_new"))
    return RPMA_E_PROVIDER;
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_cq_new")) return RPMA_E_PROVIDER;  // create
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_cq_new")) return RPMA_E_PROVIDER;  // arm
  return 0;
}

int PointsCqDelete() {
  return RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_cq_delete") ? RPMA_E_PROVIDER : 0;
}

// A connection's CQs deleted: the receive CQ (if any), then the main one. The first code.
static int PointsCqDeletes(bool has_rcq) {
  int first = has_rcq ? PointsCqDelete() : 0;
  Keep(&first, PointsCqDelete());
  return first;
}

int PointsRequestFromId(const rpma_sim::ConnectionConfig& config, bool has_srq, bool srq_rcq) {
  if (RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_conn_req_new_from_id")) return RPMA_E_INVAL;
  PassIgnored(RPMA_E_INVAL, "rpma_conn_cfg_get_cq_size");
  PassIgnored(RPMA_E_INVAL, "rpma_conn_cfg_get_rcq_size");
  PassIgnored(RPMA_E_INVAL, "rpma_conn_cfg_get_compl_channel");
  PassIgnored(RPMA_E_INVAL, "rpma_conn_cfg_get_srq");
  if (has_srq) PassIgnored(RPMA_E_INVAL, "rpma_srq_get_rcq");
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_req_new_from_id")) return RPMA_E_PROVIDER;
  const CqChannel channel = config.shared_channel ? CqChannel::kShared : CqChannel::kOwn;
  int code = PointsCqNew(channel);
  if (code != 0) return code;
  bool has_rcq = !srq_rcq && config.rcq_size > 0;
  if (has_rcq && (code = PointsCqNew(channel)) != 0) {
    (void)PointsCqDelete();  // the main CQ made above
    return code;
  }
  PassIgnored(RPMA_E_INVAL, "rpma_conn_cfg_get_sq_size");
  PassIgnored(RPMA_E_INVAL, "rpma_conn_cfg_get_rq_size");
  PassIgnored(RPMA_E_INVAL, "rpma_conn_cfg_get_srq");
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_peer_setup_qp")) {
    (void)PointsCqDeletes(has_rcq);
    return RPMA_E_PROVIDER;
  }
  // librpma logs the two ends' GIDs when NOTICE is logged; each is a point.
  int threshold = RPMA_LOG_DISABLED;
  rpma_sim::InternalCall internal;  // librpma reads its threshold directly
  if (rpma_log_get_threshold(RPMA_LOG_THRESHOLD, reinterpret_cast<rpma_log_level*>(&threshold)) ==
          0 &&
      threshold >= RPMA_LOG_LEVEL_NOTICE) {
    PassIgnored(RPMA_E_UNKNOWN, "rpma_snprintf_gid");
    PassIgnored(RPMA_E_UNKNOWN, "rpma_snprintf_gid");
  }
  return 0;
}

int PointsConnNew() {
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_new")) return RPMA_E_PROVIDER;
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_new")) return RPMA_E_PROVIDER;
  if (RPMA_FAULT_FIRES(RPMA_E_NOMEM, "rpma_flush_new")) return RPMA_E_NOMEM;
  if (rpma_sim::GetDeviceCaps().native_flush) return 0;  // no helper region to make
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_flush_apm_new")) return RPMA_E_PROVIDER;
  if (RPMA_FAULT_FIRES(RPMA_E_NOMEM, "rpma_mr_reg")) return RPMA_E_NOMEM;
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_peer_setup_mr_reg")) return RPMA_E_PROVIDER;
  return 0;
}

int PointsConnect(RequestDirection direction, bool has_rcq) {
  const bool incoming = direction == RequestDirection::kIncoming;
  const char* step = incoming ? "rpma_conn_new_accept" : "rpma_conn_new_connect";
  int code = RPMA_FAULT_FIRES(RPMA_E_PROVIDER, step) ? RPMA_E_PROVIDER : PointsConnNew();
  if (code == 0 && !incoming && RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_new_connect")) {
    (void)PointsConnDelete(has_rcq, CqChannel::kOwn);
    return RPMA_E_PROVIDER;
  }
  if (code != 0) (void)PointsCqDeletes(has_rcq);
  return code;
}

int PointsRequestDelete(RequestDirection direction, bool has_rcq) {
  int first = PointsCqDeletes(has_rcq);
  const char* end =
      direction == RequestDirection::kIncoming ? "rpma_conn_req_reject" : "rpma_conn_req_destroy";
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, end)) Keep(&first, RPMA_E_PROVIDER);
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_req_delete")) Keep(&first, RPMA_E_PROVIDER);
  return first;
}

int PointsConnDelete(bool has_rcq, CqChannel channel) {
  int first = 0;
  // The flush helper first: its region, then the helper.
  if (!rpma_sim::GetDeviceCaps().native_flush) {
    if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_mr_dereg")) Keep(&first, RPMA_E_PROVIDER);
    if (RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_flush_apm_delete")) Keep(&first, RPMA_E_INVAL);
  }
  if (RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_flush_delete")) Keep(&first, RPMA_E_INVAL);
  Keep(&first, PointsCqDeletes(has_rcq));
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_delete")) Keep(&first, RPMA_E_PROVIDER);
  if (channel == CqChannel::kShared && RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_delete"))
    Keep(&first, RPMA_E_PROVIDER);
  return first;
}
