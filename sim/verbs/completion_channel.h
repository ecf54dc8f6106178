// completion_channel.h -- ibv_comp_channel: one event per armed completion queue.
//
// A completion queue that is armed (CompletionQueue::Arm, as ibv_req_notify_cq) and then
// receives a completion queues one event here, naming itself. GetEvent consumes one event
// (ibv_get_cq_event + ibv_ack_cq_events); the fd is readable while events are pending.
#ifndef RPMA_SIM_VERBS_COMPLETION_CHANNEL_H_
#define RPMA_SIM_VERBS_COMPLETION_CHANNEL_H_

#include <deque>

#include "sim/common/event_fd.h"
#include "sim/common/mutex.h"
#include "sim/common/status.h"

namespace rpma_sim {

class CompletionQueue;

class CompletionChannel {
 public:
  int fd() const { return event_fd_.fd(); }

  // Queues an event for `cq` (called by the CQ when an armed CQ gets a completion).
  void Notify(CompletionQueue* cq);

  // Takes the oldest event. Blocks unless the fd is non-blocking; then kNoCompletion.
  Status GetEvent(CompletionQueue** cq);

  // Drops the pending events of a CQ that is being destroyed.
  void Forget(CompletionQueue* cq);

 private:
  EventFd event_fd_;
  Mutex mutex_;
  std::deque<CompletionQueue*> events_ GUARDED_BY(mutex_);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_COMPLETION_CHANNEL_H_
