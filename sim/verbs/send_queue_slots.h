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

namespace rpma_sim {

// Lock-free: two counters, each moved forward with a compare-and-swap (a post takes a slot
// under its queue pair's execution lock, a poll gives slots back under its CQ's lock).
class SendQueueSlots {
 public:
  explicit SendQueueSlots(uint32_t capacity) : capacity_(capacity) {}

  // Takes a slot; returns false when the queue is full. `*sequence` numbers the request.
  bool Acquire(uint64_t* sequence) {
    uint64_t next = next_.load(std::memory_order_relaxed);
    do {
      if (next - retired_.load(std::memory_order_acquire) >= capacity_) return false;
    } while (!next_.compare_exchange_weak(next, next + 1, std::memory_order_relaxed));
    *sequence = next;
    return true;
  }

  // Gives back the slots of every request up to and including `sequence`.
  void RetireThrough(uint64_t sequence) {
    uint64_t retired = retired_.load(std::memory_order_relaxed);
    while (sequence + 1 > retired &&
           !retired_.compare_exchange_weak(retired, sequence + 1, std::memory_order_release)) {
    }
  }

  uint32_t in_use() const {
    const uint64_t retired = retired_.load(std::memory_order_acquire);
    return static_cast<uint32_t>(next_.load(std::memory_order_relaxed) - retired);
  }

  // Whether a request posted before `sequence` still holds its slot: its completion (or a
  // later one's) was not polled yet. A hint that may come late by a poll.
  bool EarlierOutstanding(uint64_t sequence) const {
    return retired_.load(std::memory_order_relaxed) < sequence;
  }

 private:
  const uint32_t capacity_;
  std::atomic<uint64_t> next_{0};     // the next request's sequence
  std::atomic<uint64_t> retired_{0};  // every request before it has its slot back
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_SEND_QUEUE_SLOTS_H_
