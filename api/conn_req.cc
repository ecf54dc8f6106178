// conn_req.cc -- rpma_conn_req_*: outgoing and incoming connection requests, accept/connect,
// reject, and receives posted before the connection exists.
#include <librpma.h>

#include <memory>
#include <new>

#include "api/api_prologue.h"
#include "api/conn_cfg.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/librpma_points.h"
#include "api/receive_request.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/common/log.h"

namespace {
constexpr char kRequest[] = "connection request";
}  // namespace

int rpma_conn_req_new(struct rpma_peer* peer, const char* addr, const char* port,
                      const struct rpma_conn_cfg* cfg, struct rpma_conn_req** req_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_req_new");
  if (peer == nullptr || addr == nullptr || port == nullptr || req_ptr == nullptr)
    return RPMA_E_INVAL;
  const rpma_srq* srq = ConnConfigSrq(cfg, __func__);
  if (Inherited(*peer, __func__, "peer") ||
      (srq != nullptr && Inherited(*srq, __func__, "shared RQ")))
    return RPMA_E_PROVIDER;
  rpma_sim::ConnectionConfig config = ConnConfigOrDefault(cfg, __func__);
  // An info, a CM id, the address and the route resolved, then the request's queues.
  (void)RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_conn_cfg_get_timeout");
  int code = PointsInfoNew();
  if (code != 0) return code;
  bool srq_rcq = config.srq && config.srq->rcq();
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_req_new") ||
      RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_info_resolve_addr") ||
      RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_conn_req_new"))
    code = RPMA_E_PROVIDER;
  if (code == 0) code = PointsRequestFromId(config, config.srq != nullptr, srq_rcq);
  if (code == 0 && config.shared_channel && srq_rcq) code = RPMA_E_INVAL;
  std::unique_ptr<rpma_conn_req> req;
  if (code == 0) {
    req.reset(new (std::nothrow) rpma_conn_req);
    if (!req) code = RPMA_E_NOMEM;
  }
  if (code == 0)
    code = ToRpmaError(
        rpma_sim::ConnectionRequest::NewOutgoing(peer->pd, addr, port, config, &req->request));
  PointsInfoDelete();  // as librpma's, on every path once the info exists
  if (code != 0) return code;
  req->peer = peer;
  SIM_LOG_NOTICE("Requesting a connection to %s:%s", addr, port);
  *req_ptr = req.release();
  return 0;
}

int rpma_conn_req_delete(struct rpma_conn_req** req_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_conn_req_delete(req_ptr));  // frees it whatever the result
  if (req_ptr == nullptr) return RPMA_E_INVAL;
  rpma_conn_req* req = *req_ptr;
  if (req == nullptr) return 0;
  if (Inherited(*req, __func__, kRequest)) {
    KeepInherited(req);  // the parent's request stays as it is (not rejected from here)
    *req_ptr = nullptr;
    return RPMA_E_PROVIDER;
  }
  if (!MayEnd(*req, __func__, kRequest)) return RPMA_E_INVAL;
  const RequestDirection direction =
      req->request->incoming() ? RequestDirection::kIncoming : RequestDirection::kOutgoing;
  bool has_rcq = req->request->queues().rcq != nullptr;
  delete req;  // an incoming request is rejected by its destructor
  *req_ptr = nullptr;
  return PointsRequestDelete(direction, has_rcq);
}

int rpma_conn_req_connect(struct rpma_conn_req** req_ptr,
                          const struct rpma_conn_private_data* pdata, struct rpma_conn** conn_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_conn_req_delete(req_ptr));  // consumes it whatever the result
  if (req_ptr == nullptr || *req_ptr == nullptr) return RPMA_E_INVAL;
  if (Inherited(**req_ptr, __func__, kRequest)) {
    KeepInherited(*req_ptr);  // consumed here, as a failed connect's request is
    *req_ptr = nullptr;
    return RPMA_E_PROVIDER;
  }
  if (RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_conn_req_connect")) {
    rpma_sim::InternalCall internal;  // librpma's own deleter, not the application's call
    (void)rpma_conn_req_delete(req_ptr);
    return RPMA_E_INVAL;
  }
  if (!MayEnd(**req_ptr, __func__, kRequest)) return RPMA_E_INVAL;
  std::unique_ptr<rpma_conn_req> req(*req_ptr);
  *req_ptr = nullptr;
  if (conn_ptr == nullptr || (pdata != nullptr && (pdata->ptr == nullptr || pdata->len == 0)))
    return RPMA_E_INVAL;  // the request is consumed (and rejected if incoming)
  auto conn = std::unique_ptr<rpma_conn>(new (std::nothrow) rpma_conn);
  if (!conn) return RPMA_E_NOMEM;
  std::vector<uint8_t> data;
  if (pdata != nullptr) {
    const auto* bytes = static_cast<const uint8_t*>(pdata->ptr);
    data.assign(bytes, bytes + pdata->len);
  }
  bool incoming = req->request->incoming();
  int code = PointsConnect(incoming ? RequestDirection::kIncoming : RequestDirection::kOutgoing,
                           req->request->queues().rcq != nullptr);
  if (code != 0) return code;  // the request is consumed
  if (incoming) {
    // The client's private data moves from the request to the connection.
    conn->private_data = req->request->private_data();
    conn->has_private_data = !conn->private_data.empty();
  }
  rpma_sim::Status status =
      rpma_sim::ConnectionRequest::Connect(std::move(req->request), data, &conn->connection);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  rpma_sim::ConnectionQueues& queues = conn->connection->queues();
  conn->cq.cq = queues.cq;
  conn->cq.shared_channel = queues.shared_channel != nullptr;
  conn->cq.connection = conn.get();
  if (queues.rcq) {
    conn->rcq = std::make_unique<rpma_cq>();
    conn->rcq->cq = queues.rcq;
    conn->rcq->shared_channel = conn->cq.shared_channel;
    conn->rcq->connection = conn.get();
  }
  *conn_ptr = conn.release();
  return 0;
}

int rpma_conn_req_recv(struct rpma_conn_req* req, struct rpma_mr_local* dst, size_t offset,
                       size_t len, const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_req_recv");
  if (req == nullptr || dst == nullptr) return RPMA_E_INVAL;
  if (Inherited(*req, __func__, kRequest) || Inherited(*dst, __func__, "registered memory"))
    return RPMA_E_PROVIDER;
  CallOn counted(*req, __func__, kRequest, Sharing::kOneThread);
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_recv");
  return ToRpmaError(
      req->request->queues().qp->PostReceive(MakeReceiveRequest(dst, offset, len, op_context)));
}

int rpma_conn_req_get_private_data(const struct rpma_conn_req* req,
                                   struct rpma_conn_private_data* pdata) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_req_get_private_data");
  if (req == nullptr || pdata == nullptr) return RPMA_E_INVAL;
  CallOn counted(*req, __func__, kRequest, Sharing::kOneThread);
  *pdata = req->data;
  return 0;
}
