// node.h -- a node of the simulated fabric: what one rpma_peer is.
//
// Every peer (protection domain) is its own node, even when both sides of a connection live
// in one process, with an identity (a 64-bit id, unique across processes and hosts for all
// practical purposes) that stays the same whichever transport its connections use. A node
// can fail as a whole: each connection it is part of is lost, on both sides, as when a host
// or its NIC dies. Fault injection and power failure build on that.
#ifndef RPMA_SIM_FABRIC_NODE_H_
#define RPMA_SIM_FABRIC_NODE_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <vector>

#include "sim/common/mutex.h"

namespace rpma_sim {

// Something that belongs to a node and ends when the node fails (a connection).
class NodeMember {
 public:
  virtual ~NodeMember() = default;
  // The node failed. Called without the node's lock, on the failing thread.
  virtual void OnNodeFailed() = 0;
  // The node is about to fail (a power failure): the member stops touching the node's
  // memory (its queue pair goes to error) but tells nobody yet; OnNodeFailed follows.
  virtual void OnNodeStopping() {}
};

class Node {
 public:
  Node();

  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  uint64_t id() const { return id_; }

  // `member` ends when this node fails; the node does not keep it alive.
  void Join(const std::weak_ptr<NodeMember>& member);

  // Fails the node: every member still alive is told, once. The node stays usable: what
  // joins it afterwards works as before. Returns how many members were told. With
  // `while_stopped`, every member is stopped first, then it runs, then they are told: a
  // power failure reverts memory there, before anyone can see the loss.
  int Fail(const std::function<void()>& while_stopped = nullptr);

 private:
  const uint64_t id_;
  Mutex mutex_;
  std::vector<std::weak_ptr<NodeMember>> members_ GUARDED_BY(mutex_);
  size_t prune_at_ GUARDED_BY(mutex_) = 16;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_FABRIC_NODE_H_
