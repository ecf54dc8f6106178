// ep.cc -- rpma_ep_*: the listening endpoint and the connection requests arriving on it.
#include <librpma.h>

#include <new>

#include "api/api_prologue.h"
#include "api/conn_cfg.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/common/log.h"

int rpma_ep_listen(struct rpma_peer* peer, const char* addr, const char* port,
                   struct rpma_ep** ep_ptr) {
  RPMA_API_PROLOGUE();
  if (peer == nullptr || addr == nullptr || port == nullptr || ep_ptr == nullptr)
    return RPMA_E_INVAL;
  rpma_sim::SocketAddress address;
  rpma_sim::Status status = rpma_sim::ResolveAddress(addr, port, true, &address);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  auto* ep = new (std::nothrow) rpma_ep;
  if (ep == nullptr) return RPMA_E_NOMEM;
  status = rpma_sim::Listener::Listen(address, &ep->listener);
  if (status != rpma_sim::Status::kOk) {
    delete ep;
    return ToRpmaError(status);
  }
  ep->peer = peer;
  SIM_LOG_NOTICE("Waiting for incoming connection on %s:%s", addr, port);
  *ep_ptr = ep;
  return 0;
}

int rpma_ep_shutdown(struct rpma_ep** ep_ptr) {
  RPMA_API_PROLOGUE();
  if (ep_ptr == nullptr) return RPMA_E_INVAL;
  rpma_ep* ep = *ep_ptr;
  if (ep == nullptr) return 0;
  ep->listener->Shutdown();
  SIM_LOG_NOTICE("Shutting down the endpoint");
  delete ep;
  *ep_ptr = nullptr;
  return 0;
}

int rpma_ep_get_fd(const struct rpma_ep* ep, int* fd) {
  RPMA_API_PROLOGUE();
  if (ep == nullptr || fd == nullptr) return RPMA_E_INVAL;
  *fd = ep->listener->channel().fd();
  return 0;
}

int rpma_ep_next_conn_req(struct rpma_ep* ep, const struct rpma_conn_cfg* cfg,
                          struct rpma_conn_req** req_ptr) {
  RPMA_API_PROLOGUE();
  if (ep == nullptr || req_ptr == nullptr) return RPMA_E_INVAL;
  rpma_sim::CmEvent event;
  rpma_sim::Status status = ep->listener->channel().Next(&event);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  if (event.type != rpma_sim::CmEventType::kConnectRequest) {
    SIM_LOG_ERROR("Unexpected event received on the endpoint");
    return RPMA_E_INVAL;
  }
  auto* req = new (std::nothrow) rpma_conn_req;
  if (req == nullptr) return RPMA_E_NOMEM;
  status = rpma_sim::ConnectionRequest::NewIncoming(ep->peer->pd, std::move(event),
                                                   ConnConfigOrDefault(cfg), &req->request);
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
  *req_ptr = req;
  return 0;
}
