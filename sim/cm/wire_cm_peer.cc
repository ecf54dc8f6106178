// wire_cm_peer.cc -- what an id does, sent to its peer process as a frame.
#include "sim/cm/wire_cm_peer.h"

#include "sim/cm/tcp_session.h"

namespace rpma_sim {

std::string WireCmPeer::name() const { return session_->peer(); }

void WireCmPeer::Accept(const std::vector<uint8_t>& private_data,
                        const std::shared_ptr<QueuePair>& qp, uint64_t node, int timeout_ms,
                        AfterUnlock* after) {
  session_->WatchLiveness(timeout_ms);
  session_->BindQueuePair(qp);
  qp->Connect(session_->link());
  std::shared_ptr<FrameWire> shm_wire = session_->SendAccept(private_data, node);
  // After the CM lock, which a wire's read lock comes before: the data path over shared
  // memory begins reading there, without waking the engine.
  if (shm_wire) {
    std::shared_ptr<TcpSession> session = session_;
    after->Add([session, shm_wire] { session->StartReading(shm_wire); });
  }
}

void WireCmPeer::Reject() { session_->Send(FrameType::kReject); }

void WireCmPeer::Disconnect(CmId& self) { session_->Send(FrameType::kDisconnect); }

// DREP: answered after the responses this side queued before.
void WireCmPeer::AnswerDisconnect() { session_->Send(FrameType::kDisconnect); }

void WireCmPeer::Close() { session_->Close(); }

void WireCmPeer::Flush(AfterUnlock* after) {
  std::shared_ptr<TcpSession> session = session_;
  after->Add([session] { session->Flush(); });
}

// The other process learns it as from a dead host: its wire ends.
void WireCmPeer::Abort(AfterUnlock* after) {
  std::shared_ptr<TcpSession> session = session_;
  after->Add([session] { session->Abort(); });
}

}  // namespace rpma_sim
