// send_queue_slots.h -- send-queue occupancy as hardware counts it.
//
// Every posted send-side work request takes a slot. Slots come back only when a completion
// of that queue is polled: that completion's work request and every one posted before it
// (unsignalled ones included) are retired. Posting into a full queue fails (ENOMEM in
// ibv_post_send, RPMA_E_PROVIDER in librpma).
#ifndef RPMA_SIM_VERBS_SEND_QUEUE_SLOTS_H_
#define RPMA_SIM_VERBS_SEND_QUEUE_SLOTS_H_

#include <stdint.h>

#include <atomic>

#include "sim/common/mutex.h"

namespace rpma_sim {

class SendQueueSlots {
 public:
  explicit SendQueueSlots(uint32_t capacity) : capacity_(capacity) {}

  // Takes a slot; returns false when the queue is full. `*sequence` numbers the request.
  bool Acquire(uint64_t* sequence) {
    MutexLock lock(&mutex_);
    if (next_ - retired_.load(std::memory_order_relaxed) >= capacity_) return false;
    *sequence = next_++;
    return true;
  }

  // Gives back the slots of every request up to and including `sequence`.
  void RetireThrough(uint64_t sequence) {
    MutexLock lock(&mutex_);
    if (sequence + 1 > retired_.load(std::memory_order_relaxed))
      retired_.store(sequence + 1, std::memory_order_relaxed);
  }

  uint32_t in_use() {
    MutexLock lock(&mutex_);
    return static_cast<uint32_t>(next_ - retired_.load(std::memory_order_relaxed));
  }

  // Whether a request posted before `sequence` still holds its slot: its completion (or a
  // later one's) was not polled yet. Without a lock: a hint that may come late by a poll.
  bool EarlierOutstanding(uint64_t sequence) const {
    return retired_.load(std::memory_order_relaxed) < sequence;
  }

 private:
  const uint32_t capacity_;
  Mutex mutex_;
  uint64_t next_ GUARDED_BY(mutex_) = 0;
  // Written under mutex_; read without it by EarlierOutstanding.
  std::atomic<uint64_t> retired_{0};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_SEND_QUEUE_SLOTS_H_
