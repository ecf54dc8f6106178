// wire_connection.cc -- a connection's handshake, its CM frames to the id, and its end.
#include "sim/cm/wire_connection.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include "sim/common/mutex.h"

#include "sim/cm/cm_id.h"
#include "sim/cm/cm_lock.h"
#include "sim/cm/connect_gate.h"
#include "sim/cm/listener.h"
#include "sim/cm/wire_cm_peer.h"
#include "sim/common/log.h"
#include "sim/fabric/io_service.h"
#include "sim/transport/frame_router.h"

namespace rpma_sim {

// Frames from the shared-memory wire go where the TCP wire's go; its end is the end of the
// connection.
class WireConnection::SharedMemoryHandler : public WireHandler {
 public:
  explicit SharedMemoryHandler(std::shared_ptr<WireConnection> session)
      : session_(std::move(session)) {}
  void OnFrame(Frame frame) override {
    // Doorbells travel on TCP; one inside the rings is a peer that misbehaves.
    if (frame.type == FrameType::kDoorbell) return session_->Malformed("a doorbell in the rings");
    session_->OnFrame(std::move(frame));
  }
  void OnWireClosed(const std::string& reason) override {
    session_->wire_->Abort();
    session_->Ended(reason);
  }

 private:
  std::shared_ptr<WireConnection> session_;
};

WireConnection::WireConnection(std::shared_ptr<FrameWire> wire, std::weak_ptr<Listener> listener)
    : wire_(std::move(wire)),
      link_(std::make_shared<WireLink>(wire_)),
      listener_(std::move(listener)),
      server_(!listener_.expired()) {}

void WireConnection::Start() {
  // A client sends its HELLO right after the TCP handshake. A connection that has not within
  // kHelloTimeoutMs (a port scanner, a stuck peer) would hold an fd of this process for as
  // long as it stayed open, past the endpoint's shutdown too: it is closed. A client whose
  // HELLO is not answered within kAnswerTimeoutMs (a port where something else listens, a
  // stuck server) would wait for ever: the connection is closed and the request ends
  // unreachable, as rdma_cm's does once the CM's retries run out. The timer is cancelled
  // once the HELLO (or the answer) comes or the connection ends, so that it keeps nothing
  // waiting on the engine (which a process's exit would find still running). Made before
  // the wire starts reading.
  const int timeout_ms = server_ ? kHelloTimeoutMs : kAnswerTimeoutMs;
  handshake_timer_ = std::make_shared<boost::asio::steady_timer>(
      IoContext(), std::chrono::milliseconds(timeout_ms));
  std::weak_ptr<WireConnection> weak = shared_from_this();
  handshake_timer_->async_wait([weak, timeout_ms](const boost::system::error_code& error) {
    std::shared_ptr<WireConnection> session = weak.lock();
    if (error || !session) return;  // cancelled
    {
      MutexLock lock(&session->mutex_);
      if (session->server_ ? session->hello_seen_ : session->answered_) return;
    }
    SIM_LOG_WARNING("%s %s in %d ms: closed", session->peer().c_str(),
                    session->server_ ? "sent no HELLO" : "did not answer the HELLO", timeout_ms);
    session->Abort();
  });
  // Only now: the first frame read (on the engine, or on this thread) may stop the timer,
  // which must be there by then.
  auto router = std::make_shared<FrameRouter>(shared_from_this(), link_);
  tcp_router_ = router;
  wire_->Start(std::move(router));
}

void WireConnection::StopHandshakeTimer() {
  // On the engine, which owns the timer, whichever thread read the frame.
  if (handshake_timer_)
    boost::asio::post(IoContext(), [timer = handshake_timer_] { timer->cancel(); });
}

void WireConnection::BindId(const std::shared_ptr<CmId>& id) {
  MutexLock lock(&CmMutex());
  id_ = id;
}

void WireConnection::SendHello(std::vector<uint8_t> private_data,
                               std::shared_ptr<ShmSegment> segment, bool required, uint64_t node) {
  HelloMessage hello;
  hello.private_data = std::move(private_data);
  hello.node = node;
  if (segment) {
    hello.has_offer = true;
    hello.offer = ShmOffer{segment->name(), segment->nonce(), required};
    shm_.Hold(std::move(segment));
  }
  wire_->Send(FrameType::kHello, EncodeHello(hello));
}

std::shared_ptr<FrameWire> WireConnection::SendAccept(std::vector<uint8_t> private_data,
                                                      uint64_t node) {
  std::shared_ptr<ShmSegment> segment = shm_.held();
  AcceptMessage accept{std::move(private_data), segment != nullptr, node};
  // From the ACCEPT on, the client sends nothing but DOORBELLs on TCP: a data frame it
  // sends there as soon as it reads the ACCEPT is malformed already.
  if (segment)
    if (std::shared_ptr<FrameRouter> router = tcp_router_.lock()) router->DataMoved();
  wire_->Send(FrameType::kAccept, EncodeAccept(accept));
  return segment ? MoveToSharedMemory(std::move(segment)) : nullptr;
}

void WireConnection::Send(FrameType type, std::vector<uint8_t> body) {
  link_->SendFrame(type, std::move(body));
}

void WireConnection::Close() {
  std::shared_ptr<FrameWire> shm_wire = this->shm_wire();
  // The shared-memory wire closes the TCP one once its last frame is in the ring.
  if (shm_wire)
    shm_wire->Close();
  else
    wire_->Close();
}

void WireConnection::Flush() {
  std::shared_ptr<FrameWire> shm_wire = this->shm_wire();
  // A peer that stopped reading its ring cannot hold this side's goodbye forever.
  if (shm_wire && !shm_wire->Flush(kFlushTimeoutMs)) shm_wire->Abort();
  wire_->Flush(kFlushTimeoutMs);
}

void WireConnection::Abort() {
  std::shared_ptr<FrameWire> shm_wire = this->shm_wire();
  if (shm_wire) shm_wire->Abort();
  wire_->Abort();
}

void WireConnection::Malformed(const std::string& what) {
  // Both wires end: the shared-memory one (if any) as the TCP one does, nothing read after
  // the bad frame on either handed over.
  std::shared_ptr<FrameWire> shm_wire = this->shm_wire();
  if (shm_wire) shm_wire->AbortAfterMalformed();
  wire_->AbortMalformed(what);
}

void WireConnection::OnFrame(Frame frame) {
  const bool from_client = frame.type == FrameType::kHello;
  const bool from_server = frame.type == FrameType::kAccept || frame.type == FrameType::kReject;
  if ((from_client && !server_) || (from_server && server_))
    return Malformed("a connection message for the other side");
  if (from_server || from_client) {
    bool second;
    {
      MutexLock lock(&mutex_);
      bool& seen = from_server ? answered_ : hello_seen_;
      second = seen;
      seen = true;
    }
    if (second)
      return Malformed(from_server ? "a second answer to the connect request" : "a second HELLO");
    StopHandshakeTimer();
  }
  switch (frame.type) {
    case FrameType::kHello:
      OnHello(std::move(frame));
      return;
    case FrameType::kAccept:
      OnAccept(std::move(frame));
      return;
    case FrameType::kRequest:
    case FrameType::kResponse:
    case FrameType::kPlaced:
      // Routed here only once the data path moved to shared memory.
      return Malformed("a work request on TCP after the move to shared memory");
    case FrameType::kDoorbell:
      return OnDoorbell(frame);
    case FrameType::kReject:
    case FrameType::kDisconnect:
      break;
  }
  std::shared_ptr<CmId> id;
  {
    MutexLock lock(&CmMutex());
    id = id_.lock();
  }
  if (!id) return;  // the id is gone: nobody to tell
  if (frame.type == FrameType::kReject) {
    id->OnPeerRejected();
  } else {
    id->OnPeerDisconnected();
  }
}

void WireConnection::OnDoorbell(const Frame& frame) {
  if (!frame.body.empty() || !shm_.Ring()) return Malformed("a doorbell where no rings are");
}

void WireConnection::OnHello(Frame frame) {
  HelloMessage hello;
  std::string error;
  if (!DecodeHello(frame.body, kMaxConnectPrivateData, &hello, &error)) return Malformed(error);
  std::shared_ptr<ShmSegment> segment = ShmSwitch::TakeOffer(hello);  // not under the CM lock
  std::shared_ptr<Listener> listener = listener_.lock();
  bool turned_down =
      CheckConnect(ConnectionSide::kServer) == ConnectVerdict::kReject;  // fault injection
  MutexLock lock(&CmMutex());
  if (!listener || listener->shut_down() || (hello.offer.required && !segment) || turned_down ||
      listener->BacklogFullLocked()) {
    if (listener && hello.offer.required && !segment)
      SIM_LOG_WARNING("%s asks for shared memory, which this host cannot give it: rejected",
                      peer().c_str());
    Send(FrameType::kReject);
    Close();
    return;
  }
  shm_.Hold(segment);
  std::shared_ptr<CmId> incoming =
      std::make_shared<CmId>(std::make_shared<WireCmPeer>(shared_from_this()), hello.node);
  id_ = incoming;
  listener->DeliverLocked(
      CmEvent{CmEventType::kConnectRequest, incoming, std::move(hello.private_data)});
}

void WireConnection::OnAccept(Frame frame) {
  AcceptMessage accept;
  std::string error;
  if (!DecodeAccept(frame.body, kMaxAcceptPrivateData, &accept, &error)) return Malformed(error);
  std::shared_ptr<ShmSegment> segment = shm_.Answered(accept.shared_memory);
  std::shared_ptr<FrameWire> moved;
  if (accept.shared_memory) {
    if (!segment || shm_wire()) return Malformed("an accept over a segment not offered");
    segment->ProbePeer();
    moved = MoveToSharedMemory(segment);  // before the application can post
  }
  std::shared_ptr<CmId> id;
  {
    MutexLock lock(&CmMutex());
    id = id_.lock();
  }
  std::shared_ptr<WireLink> link = link_;
  if (id)
    id->OnPeerAccepted(std::move(accept.private_data), accept.node,
                       [link](const std::shared_ptr<QueuePair>& qp) { qp->Connect(link); });
  // Only now: the server's first requests must find the queue pair connected. On the
  // engine, under this wire's read lock: the new wire's is not taken here.
  if (moved) moved->StartOnEngine(SharedMemoryRouter());
}

std::shared_ptr<WireHandler> WireConnection::SharedMemoryRouter() {
  return std::make_shared<FrameRouter>(std::make_shared<SharedMemoryHandler>(shared_from_this()),
                                       link_);
}

void WireConnection::StartReading(const std::shared_ptr<FrameWire>& shm_wire) {
  shm_wire->Start(SharedMemoryRouter());
}

void WireConnection::OnWireClosed(const std::string& reason) {
  // Over shared memory the rings carry on until the peer's last frame is read.
  if (!shm_.TcpClosed()) Ended(reason);
}

void WireConnection::Ended(const std::string& reason) {
  std::shared_ptr<CmId> id;
  {
    MutexLock lock(&CmMutex());
    id = id_.lock();
  }
  StopHandshakeTimer();
  SIM_LOG_INFO("connection with %s closed: %s", peer().c_str(), reason.c_str());
  if (id) id->OnPeerGone();
}

}  // namespace rpma_sim
