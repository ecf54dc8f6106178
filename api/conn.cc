// conn.cc -- rpma_conn_*: connection events, private data, queues, the shared completion
// channel, disconnect and delete.
#include <errno.h>
#include <librpma.h>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/librpma_points.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/common/log.h"

namespace {

enum rpma_conn_event ToConnEvent(rpma_sim::CmEventType type, bool* known) {
  *known = true;
  switch (type) {
    case rpma_sim::CmEventType::kEstablished:
      return RPMA_CONN_ESTABLISHED;
    case rpma_sim::CmEventType::kDisconnected:
      return RPMA_CONN_CLOSED;
    case rpma_sim::CmEventType::kConnectError:
      return RPMA_CONN_LOST;
    case rpma_sim::CmEventType::kRejected:
      return RPMA_CONN_REJECTED;
    case rpma_sim::CmEventType::kUnreachable:
      return RPMA_CONN_UNREACHABLE;
    case rpma_sim::CmEventType::kConnectRequest:
      break;
  }
  *known = false;
  return RPMA_CONN_UNDEFINED;
}

}  // namespace

namespace {
constexpr char kConnection[] = "connection";
}  // namespace

int rpma_conn_get_event_fd(const struct rpma_conn* conn, int* fd) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_get_event_fd");
  if (conn == nullptr || fd == nullptr) return RPMA_E_INVAL;
  if (Inherited(*conn, __func__, kConnection)) return RPMA_E_INVAL;
  *fd = conn->connection->events().fd();
  return 0;
}

int rpma_conn_next_event(struct rpma_conn* conn, enum rpma_conn_event* event) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_conn_next_event");
  if (RPMA_FAULT_FIRES(RPMA_E_NO_EVENT, "rpma_conn_next_event")) {
    errno = ENODATA;
    return RPMA_E_NO_EVENT;
  }
  if (conn == nullptr || event == nullptr) return RPMA_E_INVAL;
  if (Inherited(*conn, __func__, kConnection)) return RPMA_E_PROVIDER;
  CallOn counted(*conn, __func__, kConnection, Sharing::kAllowed);  // not deleted meanwhile
  rpma_sim::CmEvent cm_event;
  rpma_sim::Status status = conn->connection->events().Next(&cm_event);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  // Past here the event is taken: a fault point that fires loses it, as in librpma.
  if (cm_event.type == rpma_sim::CmEventType::kEstablished && !conn->has_private_data &&
      RPMA_FAULT_FIRES(RPMA_E_NOMEM, "rpma_private_data_store"))
    return RPMA_E_NOMEM;
  if (RPMA_FAULT_FIRES(RPMA_E_UNKNOWN, "rpma_conn_next_event")) {
    conn->private_data.clear();  // librpma discards what it stored
    conn->has_private_data = false;
    return RPMA_E_UNKNOWN;
  }
  bool known;
  enum rpma_conn_event conn_event = ToConnEvent(cm_event.type, &known);
  if (!known) {
    SIM_LOG_WARNING("Unexpected event received on the connection");
    return RPMA_E_UNKNOWN;
  }
  // As librpma: the other side's data is stored with ESTABLISHED, once.
  if (conn_event == RPMA_CONN_ESTABLISHED && !conn->has_private_data &&
      !cm_event.private_data.empty()) {
    conn->private_data = std::move(cm_event.private_data);
    conn->has_private_data = true;
  }
  *event = conn_event;
  SIM_LOG_NOTICE("%s", rpma_utils_conn_event_2str(conn_event));
  return 0;
}

int rpma_conn_get_private_data(const struct rpma_conn* conn, struct rpma_conn_private_data* pdata) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_get_private_data");
  if (conn == nullptr || pdata == nullptr) return RPMA_E_INVAL;
  if (conn->has_private_data) {
    pdata->ptr = const_cast<uint8_t*>(conn->private_data.data());
    pdata->len = static_cast<uint8_t>(conn->private_data.size());
  } else {
    pdata->ptr = nullptr;
    pdata->len = 0;
  }
  return 0;
}

int rpma_conn_apply_remote_peer_cfg(struct rpma_conn* conn, const struct rpma_peer_cfg* pcfg) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_apply_remote_peer_cfg");
  if (conn == nullptr || pcfg == nullptr) return RPMA_E_INVAL;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_peer_cfg_get_direct_write_to_pmem");
  CallOn counted(*pcfg, __func__, "peer configuration", Sharing::kOneThread);
  conn->direct_write_to_pmem = pcfg->direct_write_to_pmem.load();
  return 0;
}

int rpma_conn_get_qp_num(const struct rpma_conn* conn, uint32_t* qp_num) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_get_qp_num");
  if (conn == nullptr || qp_num == nullptr) return RPMA_E_INVAL;
  *qp_num = conn->connection->qp().qp_num();
  return 0;
}

int rpma_conn_get_cq(const struct rpma_conn* conn, struct rpma_cq** cq_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_get_cq");
  if (conn == nullptr || cq_ptr == nullptr) return RPMA_E_INVAL;
  *cq_ptr = const_cast<rpma_cq*>(&conn->cq);
  return 0;
}

int rpma_conn_get_rcq(const struct rpma_conn* conn, struct rpma_cq** rcq_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_get_rcq");
  if (conn == nullptr || rcq_ptr == nullptr) return RPMA_E_INVAL;
  *rcq_ptr = conn->rcq.get();
  return 0;
}

int rpma_conn_get_compl_fd(const struct rpma_conn* conn, int* fd) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_get_compl_fd");
  if (conn == nullptr || fd == nullptr) return RPMA_E_INVAL;
  if (Inherited(*conn, __func__, kConnection)) return RPMA_E_INVAL;
  const auto& channel = conn->connection->queues().shared_channel;
  if (!channel) return RPMA_E_NOT_SHARED_CHNL;
  *fd = channel->fd();
  return 0;
}

int rpma_conn_wait(struct rpma_conn* conn, int flags, struct rpma_cq** cq, bool* is_rcq) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_NO_COMPLETION, "rpma_conn_wait");
  if (conn == nullptr || cq == nullptr) return RPMA_E_INVAL;
  if (Inherited(*conn, __func__, kConnection)) return RPMA_E_PROVIDER;
  CallOn counted(*conn, __func__, kConnection, Sharing::kAllowed);  // not deleted meanwhile
  const auto& channel = conn->connection->queues().shared_channel;
  if (!channel) return RPMA_E_NOT_SHARED_CHNL;
  rpma_sim::CompletionQueue* fired = nullptr;
  rpma_sim::Status status = channel->GetEvent(&fired);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  rpma_cq* which = nullptr;
  if (fired == conn->cq.cq.get()) {
    which = &conn->cq;
  } else if (conn->rcq && fired == conn->rcq->cq.get()) {
    which = conn->rcq.get();
  } else {
    *cq = nullptr;
    return RPMA_E_UNKNOWN;
  }
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_wait")) {  // before re-arming
    *cq = nullptr;
    return RPMA_E_PROVIDER;
  }
  which->cq->Arm();
  *cq = which;
  if (is_rcq != nullptr) *is_rcq = which == conn->rcq.get();
  return 0;
}

int rpma_conn_disconnect(struct rpma_conn* conn) {
  RPMA_API_PROLOGUE();
  if (conn == nullptr) return RPMA_E_INVAL;
  if (Inherited(*conn, __func__, kConnection)) return RPMA_E_PROVIDER;
  CallOn counted(*conn, __func__, kConnection, Sharing::kAllowed);  // not deleted meanwhile
  conn->connection->Disconnect();
  SIM_LOG_NOTICE("Requesting for disconnection");
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_conn_disconnect");
  return 0;
}

int rpma_conn_delete(struct rpma_conn** conn_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_conn_delete(conn_ptr));  // frees it whatever the result
  if (conn_ptr == nullptr) return RPMA_E_INVAL;
  rpma_conn* conn = *conn_ptr;
  if (conn == nullptr) return 0;
  if (Inherited(*conn, __func__, kConnection)) {
    KeepInherited(conn);  // the parent's connection stays as it is
    *conn_ptr = nullptr;
    return RPMA_E_PROVIDER;
  }
  // Not while another thread waits on it (one_thread.h): that thread would wake in freed memory.
  if (!MayEnd(*conn, __func__, kConnection)) return RPMA_E_INVAL;
  bool has_rcq = conn->rcq != nullptr;
  const CqChannel channel = conn->cq.shared_channel ? CqChannel::kShared : CqChannel::kOwn;
  delete conn;
  *conn_ptr = nullptr;
  return PointsConnDelete(has_rcq, channel);
}
