// cm_peer.h -- the other side of a connection, as one CmId sees it: another id of this
// process (InprocCmPeer) or a wire to another process (WireCmPeer), as RemoteLink is the
// other side of a queue pair.
//
// An id tells its peer what it does through this interface and learns what the other side
// did only through its own CmId::OnPeer...Locked handlers, so an id changes no state but
// its own. Every call requires the CM lock; what must wait until it is let go (a wire's
// abort, flush or first read, which take the wire's locks) goes into an AfterUnlock.
#ifndef RPMA_SIM_CM_CM_PEER_H_
#define RPMA_SIM_CM_CM_PEER_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/cm/cm_lock.h"

namespace rpma_sim {

class CmId;
class QueuePair;

// Work a peer leaves for after the CM lock, run in order by whoever let the lock go.
class AfterUnlock {
 public:
  void Add(std::function<void()> work) { work_.push_back(std::move(work)); }
  void Run() {
    for (auto& work : work_) work();
    work_.clear();
  }

 private:
  std::vector<std::function<void()>> work_;
};

// How the client's queue pair joins the connection once the server accepted: to the wire's
// link, or to the server's queue pair in this process.
using QueuePairConnector = std::function<void(const std::shared_ptr<QueuePair>&)>;

class CmPeer {
 public:
  virtual ~CmPeer() = default;

  // Who the other side is, for the log.
  virtual std::string name() const = 0;

  // Server. Whether the client still waits for the answer to its request.
  virtual bool StillRequesting() const REQUIRES(CmMutex()) = 0;
  // The request is accepted: `qp` (this side's, tagged, on node `node`) joins the
  // connection and the client learns it with `private_data`.
  virtual void Accept(const std::vector<uint8_t>& private_data,
                      const std::shared_ptr<QueuePair>& qp, uint64_t node, int timeout_ms,
                      AfterUnlock* after) REQUIRES(CmMutex()) = 0;
  // The request is turned down (a CM REJ).
  virtual void Reject() REQUIRES(CmMutex()) = 0;

  // Either side. `self` asks to disconnect (a DREQ); the other side answers (a DREP),
  // after what it owes for requests received before.
  virtual void Disconnect(CmId& self) REQUIRES(CmMutex()) = 0;
  // The other side's DREQ is answered.
  virtual void AnswerDisconnect() REQUIRES(CmMutex()) = 0;
  // The connection ends, after what was sent to the other side.
  virtual void Close() REQUIRES(CmMutex()) = 0;
  // What was sent leaves before the id goes (a wire waits for it, after the lock).
  virtual void Flush(AfterUnlock* after) REQUIRES(CmMutex()) {}
  // The connection ends at once, as when a host dies: the other side loses it.
  virtual void Abort(AfterUnlock* after) REQUIRES(CmMutex()) = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CM_PEER_H_
