// ep.cc -- rpma_ep_*: the listening endpoint and the connection requests arriving on it.
#include <errno.h>
#include <librpma.h>

#include <memory>
#include <new>

#include "api/api_prologue.h"
#include "api/conn_cfg.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/librpma_points.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/cm/cm_id.h"
#include "sim/common/log.h"

namespace {
constexpr char kEndpoint[] = "endpoint";
}  // namespace

int rpma_ep_listen(struct rpma_peer* peer, const char* addr, const char* port,
                   struct rpma_ep** ep_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_ep_listen");
  if (peer == nullptr || addr == nullptr || port == nullptr || ep_ptr == nullptr)
    return RPMA_E_INVAL;
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  // An event channel and a CM id, an info bound to the address, then listening.
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_ep_listen");
  int code = PointsInfoNew();
  if (code != 0) return code;
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_info_bind_addr") ||
      RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_ep_listen")) {
    PointsInfoDelete();
    return RPMA_E_PROVIDER;
  }
  rpma_sim::SocketAddress address;
  code = ToRpmaError(rpma_sim::ResolveAddress(addr, port, rpma_sim::AddressUse::kListen, &address));
  std::unique_ptr<rpma_ep> ep;
  if (code == 0) {
    ep.reset(new (std::nothrow) rpma_ep);
    if (!ep) code = RPMA_E_NOMEM;
  }
  if (code == 0)
    code = ToRpmaError(rpma_sim::Listener::Listen(address, peer->pd->node(), &ep->listener));
  PointsInfoDelete();  // as librpma's, on every path once the info exists
  if (code != 0) return code;
  ep->peer = peer;
  SIM_LOG_NOTICE("Waiting for incoming connection on %s:%s", addr, port);
  *ep_ptr = ep.release();
  return 0;
}

int rpma_ep_shutdown(struct rpma_ep** ep_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_ep_shutdown(ep_ptr));  // frees it whatever the result
  if (ep_ptr == nullptr) return RPMA_E_INVAL;
  rpma_ep* ep = *ep_ptr;
  if (ep == nullptr) return 0;
  if (Inherited(*ep, __func__, kEndpoint)) {
    KeepInherited(ep);  // the parent's endpoint goes on listening
    *ep_ptr = nullptr;
    return RPMA_E_PROVIDER;
  }
  if (!MayEnd(*ep, __func__, kEndpoint)) return RPMA_E_INVAL;
  ep->listener->Shutdown();
  SIM_LOG_NOTICE("Shutting down the endpoint");
  delete ep;
  *ep_ptr = nullptr;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_ep_shutdown");
  return 0;
}

int rpma_ep_get_fd(const struct rpma_ep* ep, int* fd) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_ep_get_fd");
  if (ep == nullptr || fd == nullptr) return RPMA_E_INVAL;
  if (Inherited(*ep, __func__, kEndpoint)) return RPMA_E_INVAL;
  *fd = ep->listener->channel().fd();
  return 0;
}

int rpma_ep_next_conn_req(struct rpma_ep* ep, const struct rpma_conn_cfg* cfg,
                          struct rpma_conn_req** req_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_ep_next_conn_req");
  if (RPMA_FAULT_FIRES(RPMA_E_NO_EVENT, "rpma_ep_next_conn_req")) {
    errno = ENODATA;
    return RPMA_E_NO_EVENT;
  }
  if (ep == nullptr || req_ptr == nullptr) return RPMA_E_INVAL;
  const rpma_srq* srq = ConnConfigSrq(cfg, __func__);
  if (Inherited(*ep, __func__, kEndpoint) ||
      (srq != nullptr && Inherited(*srq, __func__, "shared RQ")))
    return RPMA_E_PROVIDER;
  // One thread at a time may take the endpoint's requests (one_thread.h).
  CallOn counted(*ep, __func__, kEndpoint, Sharing::kOneThread);
  rpma_sim::CmEvent event;
  rpma_sim::Status status = ep->listener->channel().Next(&event);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  // Past here the event is taken: a point that fires rejects the request (librpma loses it).
  int code = RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_ep_next_conn_req") ? RPMA_E_INVAL : 0;
  if (code == 0 && RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_conn_req_new_from_cm_event"))
    code = RPMA_E_INVAL;
  rpma_sim::ConnectionConfig config = ConnConfigOrDefault(cfg, __func__);
  bool srq_rcq = config.srq && config.srq->rcq();
  if (code == 0) code = PointsRequestFromId(config, config.srq != nullptr, srq_rcq);
  // As for an outgoing request (conn_req.cc): the request is rejected.
  if (code == 0 && config.shared_channel && srq_rcq) code = RPMA_E_INVAL;
  if (code == 0 && RPMA_FAULT_FIRES(RPMA_E_NOMEM, "rpma_private_data_store")) {
    code = RPMA_E_NOMEM;
    (void)PointsRequestDelete(RequestDirection::kOutgoing, !srq_rcq && config.rcq_size > 0);
  }
  if (code != 0) {
    if (event.id) event.id->Reject();
    return code;
  }
  if (event.type != rpma_sim::CmEventType::kConnectRequest) {
    SIM_LOG_ERROR("Unexpected event received on the endpoint");
    return RPMA_E_INVAL;
  }
  auto* req = new (std::nothrow) rpma_conn_req;
  if (req == nullptr) return RPMA_E_NOMEM;
  status = rpma_sim::ConnectionRequest::NewIncoming(ep->peer->pd, std::move(event), config,
                                                    &req->request);
  if (status != rpma_sim::Status::kOk) {
    delete req;
    return ToRpmaError(status);
  }
  req->peer = ep->peer;
  const std::vector<uint8_t>& data = req->request->private_data();
  if (!data.empty()) {
    req->data.ptr = const_cast<uint8_t*>(data.data());
    req->data.len = static_cast<uint8_t>(data.size());
  }
  // librpma's last point here deletes (rejects) the request and returns 0 with no request.
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_ep_next_conn_req")) {
    bool has_rcq = req->request->queues().rcq != nullptr;
    delete req;
    (void)PointsRequestDelete(RequestDirection::kIncoming, has_rcq);
    *req_ptr = nullptr;
    return 0;
  }
  *req_ptr = req;
  return 0;
}
