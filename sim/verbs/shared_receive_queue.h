// shared_receive_queue.h -- ibv_srq: receive buffers shared by several queue pairs.
//
// With rcq_size > 0 it owns a receive completion queue (and its channel) where the receive
// completions of every queue pair using it go; wc.qp_num tells which one received. Posting
// a receive lets senders that waited for one (RNR) on any attached queue pair go on.
#ifndef RPMA_SIM_VERBS_SHARED_RECEIVE_QUEUE_H_
#define RPMA_SIM_VERBS_SHARED_RECEIVE_QUEUE_H_

#include <memory>
#include <mutex>
#include <vector>

#include "sim/verbs/completion_queue.h"
#include "sim/verbs/execution_lock.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/receive_queue.h"

namespace rpma_sim {

class QueuePair;

class SharedReceiveQueue {
 public:
  // kProvider when rq_size is 0 or a size is above the device's limits (ibv_create_srq and
  // ibv_create_cq fail with EINVAL).
  static Status Create(std::shared_ptr<ProtectionDomain> pd, uint32_t rq_size, uint32_t rcq_size,
                       std::shared_ptr<SharedReceiveQueue>* srq);

  SharedReceiveQueue(std::shared_ptr<ProtectionDomain> pd, uint32_t rq_size, uint32_t rcq_size);
  ~SharedReceiveQueue();

  SharedReceiveQueue(const SharedReceiveQueue&) = delete;
  SharedReceiveQueue& operator=(const SharedReceiveQueue&) = delete;

  ReceiveQueue& receives() { return receives_; }
  // The execution domain of every queue pair that takes its receives from here.
  const std::shared_ptr<ExecutionDomain>& domain() const { return domain_; }
  // nullptr when created with rcq_size == 0.
  const std::shared_ptr<CompletionQueue>& rcq() const { return rcq_; }

  // kProvider when rq_size receives are already posted.
  Status PostReceive(const ReceiveRequest& request);

  // Remembers a queue pair that takes its receives from here.
  void Attach(const std::shared_ptr<QueuePair>& qp);

  // True while a queue pair that was not destroyed still uses this SRQ.
  bool InUse();

  // ibv_destroy_srq: gives the protection domain back. Idempotent.
  void Destroy();

 private:
  // Drops the queue pairs destroyed since from attached_.
  void ForgetDestroyedLocked() REQUIRES(execution_);

  std::shared_ptr<ProtectionDomain> pd_;
  const std::shared_ptr<ExecutionDomain> domain_ = std::make_shared<ExecutionDomain>();
  ReceiveQueue receives_;
  std::shared_ptr<CompletionQueue> rcq_;
  ExecutionCapability execution_;  // its domain's lock, to the analysis
  std::vector<std::weak_ptr<QueuePair>> attached_ GUARDED_BY(execution_);
  bool destroyed_ GUARDED_BY(execution_) = false;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_SHARED_RECEIVE_QUEUE_H_
