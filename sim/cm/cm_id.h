// cm_id.h -- rdma_cm_id: one side of a connection as the connection manager sees it.
//
// The client's id connects to a listener: in this process directly, or over a TCP wire to
// any process (cm/wire_connection). One state machine, whatever the transport: the other side
// is a CmPeer (cm_peer.h) that the id tells what it does; what the other side did arrives
// through the id's OnPeer... handlers, so each id changes only its own state. Each event
// the owner reads (ESTABLISHED, REJECTED, DISCONNECTED, CONNECT_ERROR) comes exactly once.
// All state changes happen under one process-wide CM lock: they are rare and this keeps
// the two sides consistent.
#ifndef RPMA_SIM_CM_CM_ID_H_
#define RPMA_SIM_CM_CM_ID_H_

#include <stdint.h>

#include <memory>
#include <vector>

#include "sim/cm/cm_lock.h"
#include "sim/cm/cm_peer.h"
#include "sim/cm/connect_gate.h"
#include "sim/cm/connect_route.h"
#include "sim/cm/event_channel.h"
#include "sim/common/status.h"
#include "sim/fabric/address.h"
#include "sim/fabric/config.h"
#include "sim/fabric/node.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {

// rdma_cm's limits on private data with RDMA_PS_TCP (rdma_connect(3), rdma_accept(3)).
constexpr size_t kMaxConnectPrivateData = 56;
constexpr size_t kMaxAcceptPrivateData = 196;

class CmId : public NodeMember, public std::enable_shared_from_this<CmId> {
 public:
  enum class State {
    kIdle,
    kConnecting,
    kIncoming,
    kConnected,
    kDisconnecting,  // over a wire: our DISCONNECT is out, the peer's answer not yet in
    kClosed,
    kRejected,
    kDestroyed,
  };

  CmId(std::shared_ptr<EventChannel> channel, std::shared_ptr<QueuePair> qp);
  // An incoming id (kIncoming), made for a listener: `peer` is the client's side, on node
  // `remote_node`.
  CmId(std::shared_ptr<CmPeer> peer, uint64_t remote_node);
  ~CmId();

  CmId(const CmId&) = delete;
  CmId& operator=(const CmId&) = delete;

  // Routes this id's future events to `channel` (rdma_migrate_id).
  void Migrate(std::shared_ptr<EventChannel> channel);
  void set_queue_pair(std::shared_ptr<QueuePair> qp);
  // The connection's timeout (rpma_conn_cfg_set_timeout): how long a TCP connect may take,
  // and about how long a silent peer keeps its connection.
  void set_timeout_ms(int timeout_ms) { timeout_ms_ = timeout_ms; }

  // Client: sends a connect request to whoever listens on `destination`, in this process or
  // (as RPMA_SIM_TRANSPORT allows) over TCP. With nobody there the client's channel gets
  // REJECTED. kProvider if `private_data` exceeds 56 bytes.
  Status Connect(const SocketAddress& destination, const std::vector<uint8_t>& private_data);

  // Server: accepts the incoming request. kProvider if `private_data` exceeds 196 bytes
  // (the request is then rejected).
  Status Accept(const std::vector<uint8_t>& private_data);

  // Server: rejects the incoming request; the client gets REJECTED.
  void Reject();

  // Either side: both sides get DISCONNECTED once. Over a wire it waits (at most
  // kDisconnectTimeoutMs) for the peer's answer, so that the outcomes of everything posted
  // before arrive first, as a DREQ/DREP exchange does. A client whose request is not
  // answered yet ends it: CONNECT_ERROR (GiveUpRequestLocked). A no-op otherwise.
  void Disconnect();
  static constexpr int kDisconnectTimeoutMs = 2000;

  // Releases the id; a connected peer gets DISCONNECTED, a pending incoming request is
  // rejected. Called by the owner before dropping its reference.
  void Destroy();

  // What the other side did, told by its CmPeer: a wire's (WireConnection, on the progress
  // engine's thread, takes the CM lock) or an id's of this process (InprocCmPeer, under it).
  // The server accepted: `connect` joins this side's queue pair to the connection.
  void OnPeerAccepted(std::vector<uint8_t> private_data, uint64_t remote_node,
                      const QueuePairConnector& connect);
  void OnPeerAcceptedLocked(std::vector<uint8_t> private_data, uint64_t remote_node,
                            const QueuePairConnector& connect) REQUIRES(CmMutex());
  void OnPeerRejected();
  void OnPeerRejectedLocked() REQUIRES(CmMutex());
  // A DREQ, or the DREP that answers this side's.
  void OnPeerDisconnected();
  // With `after`, the queue pair's error and the owner's event wait for the lock to be let
  // go (CloseLocked); an id of this process, told under another's call, ends now.
  void OnPeerDisconnectedLocked(AfterUnlock* after = nullptr) REQUIRES(CmMutex());
  // The other side ended without a goodbye: a connected id loses its connection.
  void OnPeerGone();
  void OnPeerGoneLocked(AfterUnlock* after = nullptr) REQUIRES(CmMutex());
  // An incoming request nobody will answer (its server's node failed): the client's
  // request ends unreachable. Nothing unless the id is still an unanswered request.
  void AbortRequest();
  // Whether this client waits for the answer to its request.
  bool RequestingLocked() const REQUIRES(CmMutex()) { return state_ == State::kConnecting; }

  // NodeMember: the node of this id's queue pair failed. A connection (or one being set up)
  // is lost on both sides: here at once, at the other end when its wire ends (another
  // process) or at once (this process). The id joins its node when it connects or accepts.
  void OnNodeFailed() override;
  // NodeMember: the queue pair stops (goes to error), the connection's events wait for
  // OnNodeFailed.
  void OnNodeStopping() override;

 private:
  // The rest of Connect, over a TCP connection, with the offer of the route Connect chose
  // (RouteFor): the setting is read once per connect, so one changed meanwhile cannot send
  // it another way.
  Status ConnectOverTcp(const SocketAddress& destination, const std::vector<uint8_t>& private_data,
                        SegmentOffer offer);
  // The ...Locked functions require the CM lock.
  void PushLocked(CmEvent event) REQUIRES(CmMutex());
  // Disconnect found the connection not (or no longer) connected: if it ended, its queue
  // pair is in error when the call returns (its end may still be on its way to it).
  void EndedBeforeDisconnect(const std::shared_ptr<QueuePair>& qp);
  // The connection closed (RPMA_CONN_CLOSED), as LoseLocked.
  void CloseLocked(AfterUnlock* after) REQUIRES(CmMutex());
  // The queue pair goes to the error state, then the owner gets `event`: with `after`, both
  // once the CM lock is let go (the error may wait for the peer's copies to end: no wait
  // under the CM lock), else now.
  void EndConnectionLocked(CmEvent event, AfterUnlock* after) REQUIRES(CmMutex());
  // A connect request ends without a connection: REJECTED or UNREACHABLE for the owner.
  void EndRequestLocked(CmEventType outcome) REQUIRES(CmMutex());
  // The one way a connection is lost, whatever ended it (the wire, a node failure): the
  // queue pair goes to the error state, flushing what is outstanding after what already
  // completed, and the owner reads RPMA_CONN_LOST (`after`: see EndConnectionLocked).
  void LoseLocked(AfterUnlock* after) REQUIRES(CmMutex());
  // Joins the node of the queue pair (see OnNodeFailed).
  void JoinNodeLocked() REQUIRES(CmMutex());
  // Ends a request the connect seam (connect_gate.h) turned down: rejected now, or
  // unreachable after the timeout.
  Status FailRequestLocked(ConnectVerdict verdict) REQUIRES(CmMutex());
  // Tags the queue pair with this connection (verbs/connection_tag.h), once established.
  void TagQueuePairLocked(ConnectionSide side) REQUIRES(CmMutex());
  // Turns the client's request down and ends the peer.
  void RejectPeerLocked() REQUIRES(CmMutex());
  // A client's disconnect before the answer to its request: the request ends, lost.
  void GiveUpRequestLocked(AfterUnlock* after) REQUIRES(CmMutex());
  // Accept's work under the lock; what the peer leaves for after it goes into `after`.
  Status AcceptLocked(const std::vector<uint8_t>& private_data, AfterUnlock* after)
      REQUIRES(CmMutex());

  std::shared_ptr<EventChannel> channel_;
  std::shared_ptr<QueuePair> qp_ GUARDED_BY(CmMutex());
  std::shared_ptr<CmPeer> peer_ GUARDED_BY(CmMutex());  // the other side, once there is one
  uint64_t remote_node_ GUARDED_BY(CmMutex()) = 0;      // the other side's node, once known
  State state_ GUARDED_BY(CmMutex()) = State::kIdle;
  int timeout_ms_ = 1000;        // set by the owner before it connects or accepts
  CondVar disconnect_answered_;  // with the CM lock
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CM_ID_H_
