// execution_lock.h -- the lock under which the in-process fabric executes work requests.
//
// Posting, executing at the target, completing, RNR retries and the error flush of every
// queue pair in this process happen under it, which makes RC ordering and the two-sided
// state changes (a send that errors both queue pairs) simple and deadlock-free. It is never
// held while waiting for anything; completion queues and receive queues have their own leaf
// locks so that polling never contends with it for long.
#ifndef RPMA_SIM_VERBS_EXECUTION_LOCK_H_
#define RPMA_SIM_VERBS_EXECUTION_LOCK_H_

#include <mutex>

namespace rpma_sim {

inline std::mutex& ExecutionMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_EXECUTION_LOCK_H_
