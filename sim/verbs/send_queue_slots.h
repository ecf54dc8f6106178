// send_queue_slots.h -- send-queue occupancy as hardware counts it.
//
// Every posted send-side work request takes a slot. Slots come back only when a completion
// of that queue is polled: that completion's work request and every one posted before it
// (unsignalled ones included) are retired. Posting into a full queue fails (ENOMEM in
// ibv_post_send, RPMA_E_PROVIDER in librpma).
#ifndef RPMA_SIM_VERBS_SEND_QUEUE_SLOTS_H_
#define RPMA_SIM_VERBS_SEND_QUEUE_SLOTS_H_

#include <stdint.h>

#include "sim/common/mutex.h"

namespace rpma_sim {

class SendQueueSlots {
 public:
  explicit SendQueueSlots(uint32_t capacity) : capacity_(capacity) {}

  // Takes a slot; returns false when the queue is full. `*sequence` numbers the request.
  bool Acquire(uint64_t* sequence) {
    MutexLock lock(&mutex_);
    if (next_ - retired_ >= capacity_) return false;
    *sequence = next_++;
    return true;
  }

  // Gives back the slots of every request up to and including `sequence`.
  void RetireThrough(uint64_t sequence) {
    MutexLock lock(&mutex_);
    if (sequence + 1 > retired_) retired_ = sequence + 1;
  }

  uint32_t in_use() {
    MutexLock lock(&mutex_);
    return static_cast<uint32_t>(next_ - retired_);
  }

 private:
  const uint32_t capacity_;
  Mutex mutex_;
  uint64_t next_ GUARDED_BY(mutex_) = 0;
  uint64_t retired_ GUARDED_BY(mutex_) = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_SEND_QUEUE_SLOTS_H_
