// inproc_cm_peer.h -- the other side of a connection is an id of this process: what one id
// does reaches the other at once, through the other's own handlers, under the CM lock.
#ifndef RPMA_SIM_CM_INPROC_CM_PEER_H_
#define RPMA_SIM_CM_INPROC_CM_PEER_H_

#include <memory>
#include <string>
#include <vector>

#include "sim/cm/cm_peer.h"

namespace rpma_sim {

class InprocCmPeer : public CmPeer {
 public:
  explicit InprocCmPeer(std::weak_ptr<CmId> other) : other_(std::move(other)) {}

  std::string name() const override { return "an id of this process"; }
  bool StillRequesting() const override REQUIRES(CmMutex());
  void Accept(const std::vector<uint8_t>& private_data, const std::shared_ptr<QueuePair>& qp,
              uint64_t node, int timeout_ms, AfterUnlock* after) override REQUIRES(CmMutex());
  void Reject() override REQUIRES(CmMutex());
  // The answer arrives at once: `self` closes first, then the other side if connected.
  void Disconnect(CmId& self) override REQUIRES(CmMutex());
  void AnswerDisconnect() override {}  // answered within Disconnect
  void Close() override {}             // in process, every end is told by a call
  void Abort(AfterUnlock* after) override REQUIRES(CmMutex());

 private:
  std::weak_ptr<CmId> other_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_INPROC_CM_PEER_H_
