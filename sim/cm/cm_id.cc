// cm_id.cc -- the connection manager's state machine for one id and its remote side.
#include "sim/cm/cm_id.h"
#include "sim/common/mutex.h"

#include <atomic>
#include <chrono>

#include "sim/cm/cm_lock.h"
#include "sim/cm/connect_gate.h"
#include "sim/cm/inproc_cm_peer.h"
#include "sim/cm/listener.h"
#include "sim/cm/wire_cm_peer.h"
#include "sim/cm/wire_connection.h"
#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/common/trace.h"
#include "sim/fabric/config.h"
#include "sim/fabric/io_service.h"
#include "sim/transport/socket_stream.h"
#include "sim/verbs/work_request_trace.h"

namespace rpma_sim {

CmId::CmId(std::shared_ptr<EventChannel> channel, std::shared_ptr<QueuePair> qp)
    : channel_(std::move(channel)), qp_(std::move(qp)) {}

CmId::~CmId() = default;

CmId::CmId(std::shared_ptr<CmPeer> peer, uint64_t remote_node)
    : peer_(std::move(peer)), remote_node_(remote_node), state_(State::kIncoming) {}

void CmId::Migrate(std::shared_ptr<EventChannel> channel) {
  MutexLock lock(&CmMutex());
  channel_ = std::move(channel);
}

void CmId::set_queue_pair(std::shared_ptr<QueuePair> qp) {
  MutexLock lock(&CmMutex());
  qp_ = std::move(qp);
  // An incoming request, taken: its node's failure ends it from now on (OnNodeFailed).
  if (state_ == State::kIncoming) JoinNodeLocked();
}

void CmId::AbortRequest() {
  AfterUnlock after;
  {
    MutexLock lock(&CmMutex());
    if (state_ != State::kIncoming) return;
    state_ = State::kRejected;
    // Not a REJECT: nobody answers, and the client's request ends unreachable.
    if (peer_) peer_->Abort(&after);
  }
  after.Run();
}

namespace {

// The connection event's name as the application reads it (enum rpma_conn_event).
const char* ConnEventName(CmEventType type) {
  switch (type) {
    case CmEventType::kConnectRequest:
      return "connection request";
    case CmEventType::kEstablished:
      return "RPMA_CONN_ESTABLISHED";
    case CmEventType::kRejected:
      return "RPMA_CONN_REJECTED";
    case CmEventType::kUnreachable:
      return "RPMA_CONN_UNREACHABLE";
    case CmEventType::kDisconnected:
      return "RPMA_CONN_CLOSED";
    case CmEventType::kConnectError:
      return "RPMA_CONN_LOST";
  }
  return "?";
}

}  // namespace

void CmId::PushLocked(CmEvent event) {
  if (trace::On() && qp_ && channel_)
    WorkRequestTrace::Instant(qp_->qp_num(), "conn", ConnEventName(event.type), "");
  if (channel_) channel_->Push(std::move(event));
}

void CmId::CloseLocked(AfterUnlock* after) {
  state_ = State::kClosed;
  EndConnectionLocked(CmEvent{CmEventType::kDisconnected, nullptr, {}}, after);
}

void CmId::EndConnectionLocked(CmEvent event, AfterUnlock* after) {
  if (after == nullptr) {
    if (qp_) qp_->EnterError();
    PushLocked(std::move(event));
    return;
  }
  // The queue pair's error may wait for the peer's copies to end (shm_mode.h): not under
  // the CM lock, which every connection of the process needs. The owner learns the end
  // only once it is in the error state, as before.
  std::shared_ptr<CmId> self = shared_from_this();
  std::shared_ptr<QueuePair> qp = qp_;
  after->Add([self, qp, event = std::move(event)]() mutable {
    if (qp) qp->EnterError();
    MutexLock lock(&CmMutex());
    if (self->state_ == State::kClosed) self->PushLocked(std::move(event));  // not destroyed
  });
}

void CmId::EndRequestLocked(CmEventType outcome) {
  state_ = State::kRejected;
  PushLocked(CmEvent{outcome, nullptr, {}});
}

Status CmId::FailRequestLocked(ConnectVerdict verdict) {
  if (verdict == ConnectVerdict::kReject) {
    EndRequestLocked(CmEventType::kRejected);
    return Status::kOk;
  }
  // Nobody answers: the request ends after the connection's timeout, as one to a silent
  // address does.
  std::weak_ptr<CmId> self = weak_from_this();
  RunAt(std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_), [self] {
    std::shared_ptr<CmId> id = self.lock();
    if (!id) return;
    MutexLock lock(&CmMutex());
    if (id->state_ == State::kConnecting) id->EndRequestLocked(CmEventType::kUnreachable);
  });
  return Status::kOk;
}

void CmId::LoseLocked(AfterUnlock* after) {
  state_ = State::kClosed;
  EndConnectionLocked(CmEvent{CmEventType::kConnectError, nullptr, {}}, after);
  disconnect_answered_.SignalAll();
}

void CmId::TagQueuePairLocked(ConnectionSide side) {
  // Connections established in this process, per side (a fork child counts its own: its
  // fault rules' `conn=` selects among them).
  struct Established {
    std::atomic<uint64_t> count[2]{};
  };
  static PerProcess<Established> established;
  if (!qp_) return;
  ConnectionTag tag;
  tag.ordinal = established.Get().count[side == ConnectionSide::kServer ? 1 : 0].fetch_add(1) + 1;
  tag.side = side;
  tag.established = std::chrono::steady_clock::now();
  tag.timeout_ms = timeout_ms_;
  tag.connection = weak_from_this();
  tag.link = ConnectionTag::Link{qp_->pd()->node()->id(), remote_node_};
  qp_->SetTag(std::move(tag));
}

void CmId::JoinNodeLocked() {
  if (qp_) qp_->pd()->node()->Join(weak_from_this());
}

void CmId::RejectPeerLocked() {
  if (!peer_) return;
  peer_->Reject();
  peer_->Close();
}

Status CmId::Connect(const SocketAddress& destination, const std::vector<uint8_t>& private_data) {
  if (private_data.size() > kMaxConnectPrivateData) {
    SIM_LOG_ERROR("rdma_connect: %zu bytes of private data exceed the limit of %zu",
                  private_data.size(), kMaxConnectPrivateData);
    return Status::kProvider;
  }
  // The setting is read once, and the route decided once, for the whole request.
  const ConnectRoute route = RouteFor(GetTransport());
  ConnectVerdict verdict = CheckConnect(ConnectionSide::kClient);
  {
    MutexLock lock(&CmMutex());
    if (state_ != State::kIdle) return Status::kProvider;
    state_ = State::kConnecting;
    JoinNodeLocked();
    if (verdict != ConnectVerdict::kProceed) return FailRequestLocked(verdict);
    std::shared_ptr<Listener> listener =
        route.in_process_first ? Listener::FindLocked(destination) : nullptr;
    if (listener && (CheckConnect(ConnectionSide::kServer) == ConnectVerdict::kReject ||
                     listener->BacklogFullLocked()))
      return FailRequestLocked(ConnectVerdict::kReject);  // as if the server rejected it
    if (listener) {
      auto incoming = std::make_shared<CmId>(std::make_shared<InprocCmPeer>(weak_from_this()),
                                             qp_->pd()->node()->id());
      peer_ = std::make_shared<InprocCmPeer>(incoming);
      listener->DeliverLocked(CmEvent{CmEventType::kConnectRequest, incoming, private_data});
      return Status::kOk;
    }
    if (route.in_process_only) {
      SIM_LOG_INFO("nobody in this process listens on %s: rejected",
                   destination.ToString().c_str());
      EndRequestLocked(CmEventType::kRejected);
      return Status::kOk;
    }
  }
  return ConnectOverTcp(destination, private_data, route.segment);
}

Status CmId::ConnectOverTcp(const SocketAddress& destination,
                            const std::vector<uint8_t>& private_data, SegmentOffer offer) {
  // Not under the CM lock: connecting and creating a segment take time.
  std::shared_ptr<QueuePair> qp;
  {
    MutexLock lock(&CmMutex());
    qp = qp_;
  }
  offer = OfferTo(offer, destination);  // the request leaves the process
  const bool shm_required = offer == SegmentOffer::kRequired;
  Status status = Status::kOk;
  auto failure = SocketStream::ConnectFailure::kNone;
  std::shared_ptr<ShmSegment> segment;
  if (offer != SegmentOffer::kNone) {
    // A peer of this host: offer a segment for the data path. Made before the TCP
    // connection, so that the HELLO follows the handshake at once and the server's engine
    // takes both in one wake-up. Without one (no /dev/shm left) auto goes on over TCP; a
    // forced shm connection fails here.
    size_t ring_capacity = ShmSegment::RingCapacityFor(qp ? qp->queue_depth() : 0);
    if (ShmSegment::Create(ring_capacity, &segment) != Status::kOk && shm_required) {
      status = Status::kProvider;
      failure = SocketStream::ConnectFailure::kLocal;
    }
  }
  std::shared_ptr<WireConnection> connection;
  if (status == Status::kOk) {
    std::unique_ptr<SocketStream> stream;
    status = SocketStream::Connect(destination, timeout_ms_, &failure, &stream);
    if (status != Status::kOk && failure == SocketStream::ConnectFailure::kLocal && segment &&
        !shm_required) {
      // The segment's fd may have been the last one: auto goes on over TCP without it.
      segment.reset();
      failure = SocketStream::ConnectFailure::kNone;
      status = SocketStream::Connect(destination, timeout_ms_, &failure, &stream);
    }
    if (status == Status::kOk) {
      stream->WatchLiveness(timeout_ms_);
      connection = std::make_shared<WireConnection>(std::make_shared<FrameWire>(std::move(stream)),
                                                    std::weak_ptr<Listener>());
      connection->BindId(shared_from_this());
      connection->BindQueuePair(qp);
      connection->Start();  // its first wait begins on this thread: no engine wake-up
    }
  }
  ReleasableMutexLock lock(&CmMutex());
  if (state_ != State::kConnecting) {
    // Destroyed meanwhile, or the server closed the connection at once (the wire's end
    // ended the request).
    lock.Release();
    if (connection) connection->Abort();
    return Status::kOk;
  }
  if (failure == SocketStream::ConnectFailure::kLocal) {
    // Out of fds or shared memory here: the call that needed them fails (rdma_connect).
    state_ = State::kRejected;
    return Status::kProvider;
  }
  if (status != Status::kOk) {
    // Nobody listening is a rejection (a CM REJ); no route is an unreachable peer.
    EndRequestLocked(failure == SocketStream::ConnectFailure::kRefused ? CmEventType::kRejected
                                                                       : CmEventType::kUnreachable);
    return Status::kOk;
  }
  peer_ = std::make_shared<WireCmPeer>(connection);
  connection->SendHello(private_data, std::move(segment), shm_required, qp_->pd()->node()->id());
  return Status::kOk;
}

Status CmId::Accept(const std::vector<uint8_t>& private_data) {
  AfterUnlock after;
  Status status;
  {
    MutexLock lock(&CmMutex());
    status = AcceptLocked(private_data, &after);
  }
  after.Run();
  return status;
}

Status CmId::AcceptLocked(const std::vector<uint8_t>& private_data, AfterUnlock* after) {
  if (state_ != State::kIncoming) return Status::kProvider;
  if (private_data.size() > kMaxAcceptPrivateData) {
    SIM_LOG_ERROR("rdma_accept: %zu bytes of private data exceed the limit of %zu",
                  private_data.size(), kMaxAcceptPrivateData);
    state_ = State::kRejected;
    RejectPeerLocked();
    return Status::kProvider;
  }
  if (!peer_ || !peer_->StillRequesting()) {
    // The client gave up before the accept: the server's connection is lost.
    LoseLocked(after);
    return Status::kOk;
  }
  TagQueuePairLocked(ConnectionSide::kServer);
  peer_->Accept(private_data, qp_, qp_->pd()->node()->id(), timeout_ms_, after);
  state_ = State::kConnected;
  PushLocked(CmEvent{CmEventType::kEstablished, nullptr, {}});
  return Status::kOk;
}

void CmId::Reject() {
  MutexLock lock(&CmMutex());
  if (state_ != State::kIncoming) return;
  state_ = State::kRejected;
  RejectPeerLocked();
}

void CmId::Disconnect() {
  std::shared_ptr<QueuePair> qp;
  bool connected;
  AfterUnlock gave_up;
  {
    MutexLock lock(&CmMutex());
    qp = qp_;
    connected = state_ == State::kConnected && peer_;
    if (state_ == State::kConnecting) GiveUpRequestLocked(&gave_up);
  }
  gave_up.Run();
  if (!connected) return EndedBeforeDisconnect(qp);
  // What waits to execute with others goes before the DREQ, as a NIC's send queue would
  // have sent it (a system call: not under the CM lock).
  if (qp) qp->RunDeferred();
  AfterUnlock after;
  {
    ReleasableMutexLock lock(&CmMutex());
    if (state_ != State::kConnected || !peer_) {
      lock.Release();
      return EndedBeforeDisconnect(qp);
    }
    // DREQ: the peer answers after the responses to everything it received before; only
    // then does this queue pair go to the error state (in process: at once).
    state_ = State::kDisconnecting;
    peer_->Disconnect(*this);
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kDisconnectTimeoutMs);
    while (state_ == State::kDisconnecting &&
           disconnect_answered_.WaitUntil(&CmMutex(), deadline)) {
    }
    if (state_ == State::kDisconnecting) {
      SIM_LOG_WARNING("%s did not answer the disconnect in time", peer_->name().c_str());
      CloseLocked(&after);
      peer_->Close();
    }
  }
  after.Run();
  // Whoever ended it (the answer, on the engine, may still be on its way to this part), the
  // queue pair is in the error state when the call returns, as a real disconnect leaves it.
  if (qp) qp->EnterError();
}

void CmId::GiveUpRequestLocked(AfterUnlock* after) {
  // librdmacm moves the queue pair to the error state at once; the server's answer then
  // finds it so and the request ends with a CONNECT_ERROR (RPMA_CONN_LOST). It ends here at
  // once, and the server learns it as the connection ends (or finds the request gone).
  LoseLocked(after);
  if (peer_) peer_->Close();
}

void CmId::EndedBeforeDisconnect(const std::shared_ptr<QueuePair>& qp) {
  bool closed;
  {
    MutexLock lock(&CmMutex());
    closed = state_ == State::kClosed;
  }
  // Ended by the peer or the wire: its queue pair's error may still be on its way (the
  // engine lets the CM lock go first). The call returns with it in error, as a disconnect
  // leaves it.
  if (closed && qp) qp->EnterError();
}

void CmId::Destroy() {
  // The queue pair first, as before, but not under the CM lock (it may wait for the peer's
  // copies to end).
  std::shared_ptr<QueuePair> qp;
  {
    MutexLock lock(&CmMutex());
    qp = qp_;
  }
  if (qp) qp->EnterError();
  AfterUnlock after;
  {
    MutexLock lock(&CmMutex());
    State previous = state_;
    state_ = State::kDestroyed;
    if (!peer_) return;
    disconnect_answered_.SignalAll();
    if (previous == State::kConnected) peer_->Disconnect(*this);
    if (previous == State::kIncoming) peer_->Reject();
    peer_->Close();
    peer_->Flush(&after);
  }
  after.Run();
}

void CmId::OnPeerAccepted(std::vector<uint8_t> private_data, uint64_t remote_node,
                          const QueuePairConnector& connect) {
  MutexLock lock(&CmMutex());
  OnPeerAcceptedLocked(std::move(private_data), remote_node, connect);
}

void CmId::OnPeerAcceptedLocked(std::vector<uint8_t> private_data, uint64_t remote_node,
                                const QueuePairConnector& connect) {
  if (state_ != State::kConnecting || !peer_) return;
  remote_node_ = remote_node;
  TagQueuePairLocked(ConnectionSide::kClient);
  connect(qp_);
  state_ = State::kConnected;
  PushLocked(CmEvent{CmEventType::kEstablished, nullptr, std::move(private_data)});
}

void CmId::OnPeerRejected() {
  MutexLock lock(&CmMutex());
  OnPeerRejectedLocked();
}

void CmId::OnPeerRejectedLocked() {
  if (state_ != State::kConnecting) return;
  EndRequestLocked(CmEventType::kRejected);
  if (peer_) peer_->Close();
}

void CmId::OnPeerDisconnected() {
  AfterUnlock after;
  {
    MutexLock lock(&CmMutex());
    OnPeerDisconnectedLocked(&after);
  }
  after.Run();
}

void CmId::OnPeerDisconnectedLocked(AfterUnlock* after) {
  if (state_ == State::kConnected) {
    // DREP: answered after the responses this side queued before.
    if (peer_) peer_->AnswerDisconnect();
    CloseLocked(after);
  } else if (state_ == State::kDisconnecting) {
    CloseLocked(after);
    disconnect_answered_.SignalAll();
  }
  if (peer_) peer_->Close();
}

void CmId::OnPeerGone() {
  AfterUnlock after;
  {
    MutexLock lock(&CmMutex());
    OnPeerGoneLocked(&after);
  }
  after.Run();
}

void CmId::OnPeerGoneLocked(AfterUnlock* after) {
  switch (state_) {
    case State::kDisconnecting:
      CloseLocked(after);  // the peer closed instead of answering: closed all the same
      disconnect_answered_.SignalAll();
      break;
    case State::kConnected:
      // The peer vanished without a goodbye (killed, its node failed, or the link broke).
      LoseLocked(after);
      break;
    case State::kConnecting:
      EndRequestLocked(CmEventType::kUnreachable);
      break;
    case State::kIncoming:
      // The client vanished before the accept; Accept reports the loss.
      peer_.reset();
      break;
    default:
      break;
  }
}

void CmId::OnNodeStopping() {
  std::shared_ptr<QueuePair> qp;
  {
    MutexLock lock(&CmMutex());
    qp = qp_;
  }
  if (qp) qp->EnterError();  // not under the CM lock: it may wait for the peer's copies
}

void CmId::OnNodeFailed() {
  AfterUnlock after;
  {
    MutexLock lock(&CmMutex());
    switch (state_) {
      case State::kConnected:
      case State::kDisconnecting:
        LoseLocked(&after);
        break;
      case State::kConnecting:
        // Nobody will answer the request now.
        EndRequestLocked(CmEventType::kUnreachable);
        break;
      case State::kIncoming:
        // Taken, not accepted: the abort below ends the client's request; an accept later
        // finds it gone and gives the server RPMA_CONN_LOST.
        break;
      default:
        return;
    }
    // The other side learns it as from a dead host.
    if (peer_) peer_->Abort(&after);
    // A taken request ends here and now: over a wire, the end reaches this side later, on
    // the engine (OnPeerGone), and an accept before it must not find the client waiting.
    if (state_ == State::kIncoming) peer_.reset();
  }
  after.Run();
}

}  // namespace rpma_sim
