// wire_cm_peer.h -- the other side of a connection is another process, at the end of a
// wire connection (wire_connection.h): what an id does leaves as a frame, and what the peer did
// arrives as one (WireConnection calls the id's OnPeer... handlers).
#ifndef RPMA_SIM_CM_WIRE_CM_PEER_H_
#define RPMA_SIM_CM_WIRE_CM_PEER_H_

#include <memory>
#include <string>
#include <vector>

#include "sim/cm/cm_peer.h"

namespace rpma_sim {

class WireConnection;

class WireCmPeer : public CmPeer {
 public:
  explicit WireCmPeer(std::shared_ptr<WireConnection> connection)
      : connection_(std::move(connection)) {}

  std::string name() const override;
  // A client that gave up ended its wire, and the id dropped this peer (OnPeerGoneLocked).
  bool StillRequesting() const override { return true; }
  void Accept(const std::vector<uint8_t>& private_data, const std::shared_ptr<QueuePair>& qp,
              uint64_t node, int timeout_ms, AfterUnlock* after) override;
  void Reject() override;
  void Disconnect(CmId& self) override;
  void AnswerDisconnect() override;
  void Close() override;
  void Flush(AfterUnlock* after) override;
  void Abort(AfterUnlock* after) override;

 private:
  const std::shared_ptr<WireConnection> connection_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_WIRE_CM_PEER_H_
