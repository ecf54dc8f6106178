// connection_request.cc -- creating, accepting, connecting and rejecting requests.
#include "sim/cm/connection_request.h"

#include "sim/common/log.h"

namespace rpma_sim {

ConnectionRequest::ConnectionRequest(Direction direction, ConnectionQueues queues,
                                     std::shared_ptr<CmId> id)
    : incoming_(direction == Direction::kIncoming),
      queues_(std::move(queues)),
      id_(std::move(id)) {}

ConnectionRequest::~ConnectionRequest() {
  // An incoming request still here was never accepted: reject it (rdma_reject). An outgoing
  // one was never connected: just destroy the id.
  if (queues_.qp) queues_.qp->Destroy();
  if (!id_) return;
  if (incoming_) id_->Reject();
  id_->Destroy();
}

Status ConnectionRequest::NewOutgoing(const std::shared_ptr<ProtectionDomain>& pd, const char* addr,
                                      const char* port, const ConnectionConfig& config,
                                      std::unique_ptr<ConnectionRequest>* request) {
  SocketAddress destination;
  Status status = ResolveAddress(addr, port, AddressUse::kConnect, &destination);
  if (status != Status::kOk) return status;
  ConnectionQueues queues;
  status = ConnectionQueues::Create(pd, config, &queues);
  if (status != Status::kOk) return status;
  auto id = std::make_shared<CmId>(nullptr, queues.qp);
  id->set_timeout_ms(config.timeout_ms);
  request->reset(new ConnectionRequest(Direction::kOutgoing, std::move(queues), std::move(id)));
  (*request)->destination_ = destination;
  return Status::kOk;
}

Status ConnectionRequest::NewIncoming(const std::shared_ptr<ProtectionDomain>& pd, CmEvent event,
                                      const ConnectionConfig& config,
                                      std::unique_ptr<ConnectionRequest>* request) {
  ConnectionQueues queues;
  Status status = ConnectionQueues::Create(pd, config, &queues);
  if (status != Status::kOk) {
    event.id->Reject();  // librpma rejects a request it cannot serve
    event.id->Destroy();
    return status;
  }
  event.id->set_queue_pair(queues.qp);
  event.id->set_timeout_ms(config.timeout_ms);
  request->reset(
      new ConnectionRequest(Direction::kIncoming, std::move(queues), std::move(event.id)));
  (*request)->private_data_ = std::move(event.private_data);
  return Status::kOk;
}

Status ConnectionRequest::Connect(std::unique_ptr<ConnectionRequest> request,
                                  const std::vector<uint8_t>& private_data,
                                  std::unique_ptr<Connection>* connection) {
  auto events = std::make_shared<EventChannel>();
  request->id_->Migrate(events);
  Status status = request->incoming_ ? request->id_->Accept(private_data)
                                     : request->id_->Connect(request->destination_, private_data);
  if (status != Status::kOk) return status;  // ~ConnectionRequest rejects / destroys
  connection->reset(
      new Connection(std::move(request->id_), std::move(events), std::move(request->queues_)));
  return Status::kOk;
}

}  // namespace rpma_sim
