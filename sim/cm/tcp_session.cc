// tcp_session.cc -- routing a wire's frames to the CM id and the queue pair.
#include "sim/cm/tcp_session.h"

#include "sim/cm/cm_id.h"
#include "sim/cm/cm_lock.h"
#include "sim/cm/listener.h"
#include "sim/common/log.h"
#include "sim/verbs/execution_lock.h"

namespace rpma_sim {

TcpSession::TcpSession(std::shared_ptr<TcpWire> wire, std::weak_ptr<Listener> listener)
    : wire_(std::move(wire)),
      link_(std::make_shared<WireLink>(wire_)),
      listener_(std::move(listener)) {}

void TcpSession::BindId(const std::shared_ptr<CmId>& id) { id_ = id; }

void TcpSession::BindQueuePair(const std::shared_ptr<QueuePair>& qp) {
  std::lock_guard<std::mutex> lock(ExecutionMutex());
  qp_ = qp;
}

void TcpSession::Send(FrameType type, std::vector<uint8_t> body) {
  wire_->Send(type, std::move(body));
}

void TcpSession::Close() { wire_->Close(); }

void TcpSession::Malformed(const std::string& what) {
  SIM_LOG_ERROR("malformed message from %s: %s; closing the connection", peer().c_str(),
                what.c_str());
  wire_->Abort();
}

void TcpSession::OnFrame(Frame frame) {
  switch (frame.type) {
    case FrameType::kHello:
      OnHello(std::move(frame));
      return;
    case FrameType::kRequest:
    case FrameType::kResponse:
      OnDataFrame(frame);
      return;
    case FrameType::kAccept:
    case FrameType::kReject:
    case FrameType::kDisconnect:
      break;
  }
  std::shared_ptr<CmId> id;
  {
    std::lock_guard<std::mutex> lock(CmMutex());
    id = id_.lock();
  }
  if (!id) return;  // the id is gone: nobody to tell
  if (frame.type == FrameType::kAccept) {
    if (frame.body.size() > kMaxAcceptPrivateData) return Malformed("private data too long");
    id->OnPeerAccepted(std::move(frame.body));
  } else if (frame.type == FrameType::kReject) {
    id->OnPeerRejected();
  } else {
    id->OnPeerDisconnected();
  }
}

void TcpSession::OnHello(Frame frame) {
  std::shared_ptr<Listener> listener = listener_.lock();
  std::shared_ptr<CmId> incoming;
  {
    std::lock_guard<std::mutex> lock(CmMutex());
    if (!id_.expired()) return Malformed("a second HELLO");
    if (frame.body.size() > kMaxConnectPrivateData) return Malformed("private data too long");
    if (!listener || listener->shut_down()) {
      Send(FrameType::kReject);
      Close();
      return;
    }
    incoming = CmId::NewIncomingOverWire(shared_from_this());
    id_ = incoming;
    listener->DeliverLocked(
        CmEvent{CmEventType::kConnectRequest, incoming, std::move(frame.body)});
  }
}

void TcpSession::OnDataFrame(const Frame& frame) {
  std::string error;
  if (frame.type == FrameType::kRequest) {
    InboundRequest inbound;
    if (!WireLink::DecodeRequest(frame, &inbound, &error)) return Malformed(error);
    inbound.reply = link_;
    std::lock_guard<std::mutex> lock(ExecutionMutex());
    std::shared_ptr<QueuePair> qp = qp_.lock();
    if (!qp) return Malformed("a work request before the connection was accepted");
    qp->DeliverLocked(std::move(inbound));
    return;
  }
  uint64_t sequence;
  Outcome outcome;
  const uint8_t* data;
  size_t length;
  if (!WireLink::DecodeResponse(frame, &sequence, &outcome, &data, &length, &error))
    return Malformed(error);
  std::lock_guard<std::mutex> lock(ExecutionMutex());
  if (std::shared_ptr<QueuePair> qp = qp_.lock()) qp->OnResponseLocked(sequence, outcome, data, length);
}

void TcpSession::OnWireClosed(const std::string& reason) {
  std::shared_ptr<CmId> id;
  {
    std::lock_guard<std::mutex> lock(CmMutex());
    id = id_.lock();
  }
  SIM_LOG_INFO("connection with %s closed: %s", peer().c_str(), reason.c_str());
  if (id) id->OnWireClosed();
}

}  // namespace rpma_sim
