// inproc_cm_peer.cc -- telling an id of this process what its peer did.
#include "sim/cm/inproc_cm_peer.h"

#include "sim/cm/cm_id.h"

namespace rpma_sim {

bool InprocCmPeer::StillRequesting() const {
  std::shared_ptr<CmId> other = other_.lock();
  return other && other->RequestingLocked();
}

void InprocCmPeer::Accept(const std::vector<uint8_t>& private_data,
                          const std::shared_ptr<QueuePair>& qp, uint64_t node, int timeout_ms,
                          AfterUnlock* after) {
  std::shared_ptr<CmId> other = other_.lock();
  if (!other) return;
  other->OnPeerAcceptedLocked(private_data, node, [qp](const std::shared_ptr<QueuePair>& client) {
    QueuePair::ConnectInProcess(qp, client);
  });
}

void InprocCmPeer::Reject() {
  if (std::shared_ptr<CmId> other = other_.lock()) other->OnPeerRejectedLocked();
}

void InprocCmPeer::Disconnect(CmId& self) {
  self.OnPeerDisconnectedLocked();
  if (std::shared_ptr<CmId> other = other_.lock()) other->OnPeerDisconnectedLocked();
}

void InprocCmPeer::Abort(AfterUnlock* after) {
  // After the caller's own end (queued first in `after`), as the other side learns it.
  if (std::shared_ptr<CmId> other = other_.lock()) other->OnPeerGoneLocked(after);
}

}  // namespace rpma_sim
