// wire_cm_peer.cc -- what an id does, sent to its peer process as a frame.
#include "sim/cm/wire_cm_peer.h"

#include "sim/cm/wire_connection.h"

namespace rpma_sim {

std::string WireCmPeer::name() const { return connection_->peer(); }

void WireCmPeer::Accept(const std::vector<uint8_t>& private_data,
                        const std::shared_ptr<QueuePair>& qp, uint64_t node, int timeout_ms,
                        AfterUnlock* after) {
  connection_->WatchLiveness(timeout_ms);
  connection_->BindQueuePair(qp);
  qp->Connect(connection_->link());
  std::shared_ptr<FrameWire> shm_wire = connection_->SendAccept(private_data, node);
  // After the CM lock, which a wire's read lock comes before: the data path over shared
  // memory begins reading there, without waking the engine.
  if (shm_wire) {
    std::shared_ptr<WireConnection> connection = connection_;
    after->Add([connection, shm_wire] { connection->StartReading(shm_wire); });
  }
}

void WireCmPeer::Reject() { connection_->Send(FrameType::kReject); }

void WireCmPeer::Disconnect(CmId& self) { connection_->Send(FrameType::kDisconnect); }

// DREP: answered after the responses this side queued before.
void WireCmPeer::AnswerDisconnect() { connection_->Send(FrameType::kDisconnect); }

void WireCmPeer::Close() { connection_->Close(); }

void WireCmPeer::Flush(AfterUnlock* after) {
  std::shared_ptr<WireConnection> connection = connection_;
  after->Add([connection] { connection->Flush(); });
}

// The other process learns it as from a dead host: its wire ends.
void WireCmPeer::Abort(AfterUnlock* after) {
  std::shared_ptr<WireConnection> connection = connection_;
  after->Add([connection] { connection->Abort(); });
}

}  // namespace rpma_sim
