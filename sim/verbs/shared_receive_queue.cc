// shared_receive_queue.cc -- creation of an SRQ, its optional receive CQ, and posting to it.
#include "sim/verbs/shared_receive_queue.h"
#include "sim/common/mutex.h"

#include <algorithm>

#include "sim/common/log.h"
#include "sim/fabric/device.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {

SharedReceiveQueue::SharedReceiveQueue(std::shared_ptr<ProtectionDomain> pd, uint32_t rq_size,
                                       uint32_t rcq_size)
    : pd_(std::move(pd)), receives_(rq_size) {
  if (rcq_size > 0) {
    rcq_ = std::make_shared<CompletionQueue>(rcq_size, std::make_shared<CompletionChannel>());
    rcq_->Arm();
  }
  pd_->AddUser();
}

Status SharedReceiveQueue::Create(std::shared_ptr<ProtectionDomain> pd, uint32_t rq_size,
                                  uint32_t rcq_size, std::shared_ptr<SharedReceiveQueue>* srq) {
  if (rq_size == 0 || rq_size > kMaxSharedReceiveQueueWorkRequests ||
      rcq_size > kMaxCompletionQueueEntries) {
    SIM_LOG_ERROR("ibv_create_srq(max_wr %u, rcq %u): Invalid argument", rq_size, rcq_size);
    return Status::kProvider;
  }
  *srq = std::make_shared<SharedReceiveQueue>(std::move(pd), rq_size, rcq_size);
  return Status::kOk;
}

SharedReceiveQueue::~SharedReceiveQueue() { Destroy(); }

void SharedReceiveQueue::Destroy() {
  ExecutionDomainLock lock(execution_, domain_.get());
  if (destroyed_) return;
  destroyed_ = true;
  pd_->RemoveUser();
}

bool SharedReceiveQueue::InUse() {
  std::vector<std::shared_ptr<QueuePair>> users;
  {
    ExecutionDomainLock lock(execution_, domain_.get());
    for (const auto& entry : attached_)
      if (auto qp = entry.lock()) users.push_back(std::move(qp));
  }
  for (const auto& qp : users)
    if (!qp->destroyed()) return true;
  return false;
}

Status SharedReceiveQueue::PostReceive(const ReceiveRequest& request) {
  std::vector<std::shared_ptr<QueuePair>> users;
  {
    ExecutionDomainLock lock(execution_, domain_.get());
    Status status = receives_.Post(request);
    if (status != Status::kOk) {
      SIM_LOG_ERROR("ibv_post_srq_recv: the shared receive queue is full");
      return status;
    }
    ForgetDestroyedLocked();
    for (const auto& entry : attached_)
      if (auto qp = entry.lock()) users.push_back(std::move(qp));
  }
  // Each under its own execution lock, which adds its in-process peer's: a message that
  // waited for this receive answers its requester. Whichever takes the receive first has it.
  for (const auto& qp : users) qp->ReceivePosted();
  return Status::kOk;
}

void SharedReceiveQueue::Attach(const std::shared_ptr<QueuePair>& qp) {
  ExecutionDomainLock lock(execution_, domain_.get());
  ForgetDestroyedLocked();  // a server that only accepts and deletes posts nothing here
  attached_.push_back(qp);
}

void SharedReceiveQueue::ForgetDestroyedLocked() {
  // An expired weak_ptr keeps its queue pair's memory (make_shared: one allocation).
  attached_.erase(std::remove_if(attached_.begin(), attached_.end(),
                                 [](const std::weak_ptr<QueuePair>& qp) { return qp.expired(); }),
                  attached_.end());
}

}  // namespace rpma_sim
