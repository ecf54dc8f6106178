// cm_id.cc -- the connection manager's state machine for one id and its remote id.
#include "sim/cm/cm_id.h"

#include "sim/cm/cm_lock.h"
#include "sim/cm/listener.h"
#include "sim/common/log.h"
#include "sim/verbs/inproc_link.h"

namespace rpma_sim {

CmId::CmId(std::shared_ptr<EventChannel> channel, std::shared_ptr<QueuePair> qp)
    : channel_(std::move(channel)), qp_(std::move(qp)) {}

CmId::~CmId() = default;

std::shared_ptr<CmId> CmId::NewIncoming(const std::shared_ptr<CmId>& client) {
  auto incoming = std::make_shared<CmId>(nullptr, nullptr);
  incoming->remote_ = client;
  incoming->state_ = State::kIncoming;
  return incoming;
}

void CmId::Migrate(std::shared_ptr<EventChannel> channel) {
  std::lock_guard<std::mutex> lock(CmMutex());
  channel_ = std::move(channel);
}

void CmId::set_queue_pair(std::shared_ptr<QueuePair> qp) {
  std::lock_guard<std::mutex> lock(CmMutex());
  qp_ = std::move(qp);
}

CmId::State CmId::state() {
  std::lock_guard<std::mutex> lock(CmMutex());
  return state_;
}

void CmId::PushLocked(CmEvent event) {
  if (channel_) channel_->Push(std::move(event));
}

void CmId::CloseLocked() {
  state_ = State::kClosed;
  if (qp_) qp_->EnterError();
  PushLocked(CmEvent{CmEventType::kDisconnected, nullptr, {}});
}

Status CmId::Connect(const SocketAddress& destination, const std::vector<uint8_t>& private_data) {
  if (private_data.size() > kMaxConnectPrivateData) {
    SIM_LOG_ERROR("rdma_connect: %zu bytes of private data exceed the limit of %zu",
                  private_data.size(), kMaxConnectPrivateData);
    return Status::kProvider;
  }
  std::lock_guard<std::mutex> lock(CmMutex());
  if (state_ != State::kIdle) return Status::kProvider;
  state_ = State::kConnecting;
  std::shared_ptr<Listener> listener = Listener::FindLocked(destination);
  if (!listener) {
    SIM_LOG_INFO("nobody listens on %s: the request is rejected", destination.ToString().c_str());
    state_ = State::kRejected;
    PushLocked(CmEvent{CmEventType::kRejected, nullptr, {}});
    return Status::kOk;
  }
  auto incoming = NewIncoming(shared_from_this());
  remote_ = incoming;
  listener->DeliverLocked(CmEvent{CmEventType::kConnectRequest, incoming, private_data});
  return Status::kOk;
}

Status CmId::Accept(const std::vector<uint8_t>& private_data) {
  std::lock_guard<std::mutex> lock(CmMutex());
  if (state_ != State::kIncoming) return Status::kProvider;
  std::shared_ptr<CmId> client = remote_.lock();
  if (private_data.size() > kMaxAcceptPrivateData) {
    SIM_LOG_ERROR("rdma_accept: %zu bytes of private data exceed the limit of %zu",
                  private_data.size(), kMaxAcceptPrivateData);
    state_ = State::kRejected;
    if (client && client->state_ == State::kConnecting) {
      client->state_ = State::kRejected;
      client->PushLocked(CmEvent{CmEventType::kRejected, nullptr, {}});
    }
    return Status::kProvider;
  }
  if (!client || client->state_ != State::kConnecting) {
    // The client gave up before the accept: the server's connection is lost.
    state_ = State::kClosed;
    if (qp_) qp_->EnterError();
    PushLocked(CmEvent{CmEventType::kConnectError, nullptr, {}});
    return Status::kOk;
  }
  qp_->Connect(std::make_shared<InprocLink>(qp_, client->qp_));
  client->qp_->Connect(std::make_shared<InprocLink>(client->qp_, qp_));
  state_ = State::kConnected;
  client->state_ = State::kConnected;
  client->PushLocked(CmEvent{CmEventType::kEstablished, nullptr, private_data});
  PushLocked(CmEvent{CmEventType::kEstablished, nullptr, {}});
  return Status::kOk;
}

void CmId::Reject() {
  std::lock_guard<std::mutex> lock(CmMutex());
  if (state_ != State::kIncoming) return;
  state_ = State::kRejected;
  std::shared_ptr<CmId> client = remote_.lock();
  if (client && client->state_ == State::kConnecting) {
    client->state_ = State::kRejected;
    client->PushLocked(CmEvent{CmEventType::kRejected, nullptr, {}});
  }
}

void CmId::Disconnect() {
  std::lock_guard<std::mutex> lock(CmMutex());
  if (state_ != State::kConnected) return;
  CloseLocked();
  std::shared_ptr<CmId> remote = remote_.lock();
  if (remote && remote->state_ == State::kConnected) remote->CloseLocked();
}

void CmId::Destroy() {
  std::unique_lock<std::mutex> lock(CmMutex());
  State previous = state_;
  state_ = State::kDestroyed;
  if (qp_) qp_->EnterError();
  std::shared_ptr<CmId> remote = remote_.lock();
  if (!remote) return;
  if (previous == State::kConnected && remote->state_ == State::kConnected) {
    remote->CloseLocked();
  } else if (previous == State::kIncoming && remote->state_ == State::kConnecting) {
    remote->state_ = State::kRejected;
    remote->PushLocked(CmEvent{CmEventType::kRejected, nullptr, {}});
  }
}

}  // namespace rpma_sim
