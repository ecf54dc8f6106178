// execution_lock.h -- the locks under which work requests execute: one per queue pair, not
// one per process.
//
// Each queue pair belongs to an execution domain: a mutex of its own, or its shared receive
// queue's (the queue pairs of one SRQ take their receives from it, so they execute one at a
// time, as the SRQ's users do on hardware). Posting, executing at the target, completing,
// RNR waits and the error flush of a queue pair happen under its domain's lock and, when its
// peer is a queue pair of this process, under the peer's domain too: one work request
// touches both ends (a send that errors both queue pairs). The two are taken together with
// std::lock, so connections never deadlock, and two connections' traffic proceeds in
// parallel on two cores. A lock is not held while waiting for an event (one exception: an
// error flush over shared memory waits, at most a second, for the peer's copy from this
// side's buffers to finish: ShmSegment::RevokeReferences); completion queues, receive
// queues and the memory-region table have their own leaf locks below it.
#ifndef RPMA_SIM_VERBS_EXECUTION_LOCK_H_
#define RPMA_SIM_VERBS_EXECUTION_LOCK_H_

#include <mutex>

namespace rpma_sim {

struct ExecutionDomain {
  std::mutex mutex;
};

// Holds one domain's lock, or two (taken at once, in whatever order avoids a deadlock).
class ExecutionLock {
 public:
  // `second` may be null or the same as `first`.
  ExecutionLock(ExecutionDomain* first, ExecutionDomain* second)
      : first_(first->mutex, std::defer_lock) {
    if (second == nullptr || second == first) {
      first_.lock();
      return;
    }
    second_ = std::unique_lock<std::mutex>(second->mutex, std::defer_lock);
    std::lock(first_, second_);
  }

  ExecutionLock(ExecutionLock&&) = default;
  ExecutionLock& operator=(ExecutionLock&&) = default;

 private:
  std::unique_lock<std::mutex> first_;
  std::unique_lock<std::mutex> second_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_EXECUTION_LOCK_H_
