// completion_queue.h -- ibv_cq: completions in arrival order, arming, send-queue retirement
// and overflow.
//
// Besides the ibv_wc, an entry remembers which send queue produced it: polling a send-queue
// completion retires that work request and every unsignalled one posted before it, which is
// when hardware gives their send-queue slots back.
//
// The queue holds exactly `depth` completions (ibv_create_cq's cqe; a NIC may round it up,
// the simulator does not). One more overflows it, as on a NIC (IBV_EVENT_CQ_ERR): that
// completion and every later one are lost, Poll hands out what the queue held and then
// fails, and the queue pair whose completion did not fit goes to error with its connection
// (QueuePair::CompletionLostLocked). Nothing grows past the depth.
#ifndef RPMA_SIM_VERBS_COMPLETION_QUEUE_H_
#define RPMA_SIM_VERBS_COMPLETION_QUEUE_H_

#include <infiniband/verbs.h>
#include <stdint.h>
#include <string.h>

#include <deque>
#include <memory>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/verbs/completion_channel.h"
#include "sim/verbs/progress_source.h"

namespace rpma_sim {

class SendQueueSlots;

// The one way a work completion is made, for a send or a receive: the opcode and length
// mean something only on success (as ibv_poll_cq(3) says), so a failed one carries zeros.
inline ibv_wc MakeWorkCompletion(uint64_t wr_id, ibv_wc_status status, uint32_t qp_num,
                                 ibv_wc_opcode opcode, uint32_t byte_len) {
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  wc.wr_id = wr_id;
  wc.status = status;
  wc.qp_num = qp_num;
  if (status == IBV_WC_SUCCESS) {
    wc.opcode = opcode;
    wc.byte_len = byte_len;
  }
  return wc;
}

class CompletionQueue {
 public:
  // `channel` may be shared with other CQs (a connection's shared completion channel).
  CompletionQueue(uint32_t depth, std::shared_ptr<CompletionChannel> channel);
  ~CompletionQueue();

  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  CompletionChannel* channel() const { return channel_.get(); }
  uint32_t depth() const { return depth_; }

  // Adds a completion. `slots` and `sequence` identify the send-queue entry it retires
  // (nullptr for receive completions). Raises a channel event if the CQ is armed. False,
  // with nothing added, if the queue is full or overflowed before: it is (or stays)
  // overflowed, and the caller's queue pair must go to error.
  bool Push(const ibv_wc& wc, std::shared_ptr<SendQueueSlots> slots = nullptr,
            uint64_t sequence = 0);

  // Moves up to `max` completions into `out`; returns how many. When there are none, it
  // first lets the progress sources of its connections handle what already arrived. -1
  // when there are none and the queue overflowed (then always).
  int Poll(int max, ibv_wc* out);

  // How many completions were lost to an overflow (0: it never overflowed).
  uint64_t lost();
  // True the first time it is asked after an overflow, false ever after (so that a poller
  // that keeps polling logs the overflow once).
  bool TakeOverflowReport();

  // Adds a connection whose progress Poll may drive (kept until it expires).
  void AddProgressSource(std::weak_ptr<ProgressSource> source);

  // Requests one event for the next completion (ibv_req_notify_cq). An overflowed queue
  // raises it at once: a waiter learns of the overflow from the next Poll. The progress
  // sources hear of it (ProgressSource::OnArmed).
  void Arm();
  // Whether an event is requested: the application may sleep until the next completion.
  bool armed();

 private:
  struct Entry {
    ibv_wc wc;
    std::shared_ptr<SendQueueSlots> slots;
    uint64_t sequence;
  };

  const uint32_t depth_;
  const std::shared_ptr<CompletionChannel> channel_;
  Mutex mutex_;
  std::deque<Entry> entries_ GUARDED_BY(mutex_);
  bool armed_ GUARDED_BY(mutex_) = false;
  uint64_t lost_ GUARDED_BY(mutex_) = 0;  // completions that found the queue full
  bool overflow_reported_ GUARDED_BY(mutex_) = false;
  // Replaced, never changed in place: a poll takes the current list under mutex_ and runs
  // it without, with no allocation.
  using Sources = std::vector<std::weak_ptr<ProgressSource>>;
  std::shared_ptr<const Sources> sources_ GUARDED_BY(mutex_);

  int TakeLocked(int max, ibv_wc* out) REQUIRES(mutex_);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_COMPLETION_QUEUE_H_
