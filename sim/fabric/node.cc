// node.cc -- node identities and failing a node's members.
#include "sim/fabric/node.h"
#include "sim/common/mutex.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <random>

#include "sim/common/per_process.h"

namespace rpma_sim {
namespace {

// The high half is drawn once per process (a fork child draws its own), the low half counts:
// ids differ between nodes of one process and, but for a 2^-32 chance, between processes
// and hosts.
struct NodeIds {
  NodeIds() {
    std::random_device random;
    process_part =
        (static_cast<uint64_t>(random()) << 32) ^ (static_cast<uint64_t>(getpid()) << 32);
  }
  uint64_t process_part;
  std::atomic<uint32_t> counter{0};
};

uint64_t NextNodeId() {
  static PerProcess<NodeIds> ids;
  NodeIds& mine = ids.Get();
  return mine.process_part | (mine.counter.fetch_add(1) + 1);
}

}  // namespace

Node::Node() : id_(NextNodeId()) {}

void Node::Join(const std::weak_ptr<NodeMember>& member) {
  MutexLock lock(&mutex_);
  // Members that ended are dropped whenever the list doubled since the last time, so it
  // stays within twice the live ones at a constant cost per join.
  if (members_.size() >= prune_at_) {
    members_.erase(std::remove_if(members_.begin(), members_.end(),
                                  [](const std::weak_ptr<NodeMember>& m) { return m.expired(); }),
                   members_.end());
    prune_at_ = std::max<size_t>(16, 2 * members_.size());
  }
  members_.push_back(member);
}

int Node::Fail(const std::function<void()>& while_stopped) {
  std::vector<std::weak_ptr<NodeMember>> members;
  {
    MutexLock lock(&mutex_);
    members.swap(members_);
  }
  if (while_stopped) {
    for (const auto& weak : members)
      if (auto member = weak.lock()) member->OnNodeStopping();
    while_stopped();
  }
  int told = 0;
  for (const auto& weak : members) {
    if (auto member = weak.lock()) {
      member->OnNodeFailed();
      ++told;
    }
  }
  return told;
}

}  // namespace rpma_sim
