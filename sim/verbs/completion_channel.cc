// completion_channel.cc -- event queue of a completion channel.
#include "sim/verbs/completion_channel.h"
#include "sim/common/mutex.h"

#include <algorithm>

namespace rpma_sim {

void CompletionChannel::Notify(CompletionQueue* cq) {
  {
    MutexLock lock(&mutex_);
    events_.push_back(cq);
  }
  // After the unlock, so that the woken taker does not block on mutex_ at once; a count
  // whose event Forget took meanwhile is skipped by GetEvent.
  event_fd_.Signal();
}

Status CompletionChannel::GetEvent(CompletionQueue** cq) {
  for (;;) {
    // Interrupted by a signal too: ibv_get_cq_event's read fails with EINTR.
    if (event_fd_.Take() != EventFd::Taken::kYes) return Status::kNoCompletion;
    MutexLock lock(&mutex_);
    // A forgotten CQ's event leaves its count in the fd; skip such stale counts.
    if (events_.empty()) continue;
    *cq = events_.front();
    events_.pop_front();
    return Status::kOk;
  }
}

void CompletionChannel::Forget(CompletionQueue* cq) {
  MutexLock lock(&mutex_);
  events_.erase(std::remove(events_.begin(), events_.end(), cq), events_.end());
}

}  // namespace rpma_sim
