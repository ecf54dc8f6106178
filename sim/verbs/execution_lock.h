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

#include "sim/common/thread_annotations.h"
#include "sim/transport/frame_wire.h"

namespace rpma_sim {

// Which mutexes a queue pair's work takes changes (QueuePair::ConnectInProcess), so the
// thread-safety analysis knows the execution lock by a stand-in: each queue pair (and each
// object that runs under its lock, its link) has an ExecutionCapability, held from the
// moment the queue pair's ExecutionScope took the mutexes until it gives them back. It has
// no state and costs nothing.
class CAPABILITY("execution lock") ExecutionCapability {
 public:
  // Tells the analysis the caller holds it, where it cannot see that: an object that runs
  // under another's execution lock (its queue pair's, or an in-process peer's that shares
  // the lock). Checks nothing at run time.
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
};

// The mutex of one domain. A plain std::mutex: only ExecutionLock takes it (with std::lock,
// for two at once); the analysis sees the ExecutionCapability instead.
struct ExecutionDomain {
  std::mutex mutex;
};

// Holds one domain's mutex for its scope, known to the analysis as `capability` (an
// object's own stand-in for its domain's lock: a shared receive queue's).
class SCOPED_CAPABILITY ExecutionDomainLock {
 public:
  ExecutionDomainLock(const ExecutionCapability& capability, ExecutionDomain* domain)
      ACQUIRE(capability)
      : lock_(domain->mutex) {}
  ~ExecutionDomainLock() RELEASE() {}

  ExecutionDomainLock(const ExecutionDomainLock&) = delete;
  ExecutionDomainLock& operator=(const ExecutionDomainLock&) = delete;

 private:
  // Frames sent under the lock leave after it was given back (SendBatch, frame_wire.h).
  SendBatch batch_;
  std::lock_guard<std::mutex> lock_;
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

  // Takes them only if no other thread holds either now: owns() says whether it did.
  ExecutionLock(ExecutionDomain* first, ExecutionDomain* second, std::try_to_lock_t)
      : first_(first->mutex, std::try_to_lock) {
    if (!first_ || second == nullptr || second == first) return;
    second_ = std::unique_lock<std::mutex>(second->mutex, std::try_to_lock);
    if (!second_) first_.unlock();
  }
  bool owns() const { return first_.owns_lock() && (!second_.mutex() || second_.owns_lock()); }

  ExecutionLock(ExecutionLock&&) = default;
  ExecutionLock& operator=(ExecutionLock&&) = default;

 private:
  std::unique_lock<std::mutex> first_;
  std::unique_lock<std::mutex> second_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_EXECUTION_LOCK_H_
