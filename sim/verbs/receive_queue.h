// receive_queue.h -- posted receive buffers, of a queue pair or of a shared receive queue.
//
// Bounded like hardware (rq_size / the SRQ's max_wr). Buffers are consumed in posting order,
// a valid instance of the "unordered set" librpma documents.
#ifndef RPMA_SIM_VERBS_RECEIVE_QUEUE_H_
#define RPMA_SIM_VERBS_RECEIVE_QUEUE_H_

#include <stdint.h>

#include <deque>
#include <memory>

#include "sim/common/mutex.h"
#include "sim/common/status.h"
#include "sim/common/trace.h"
#include "sim/verbs/memory_region.h"

namespace rpma_sim {

struct ReceiveRequest {
  uint64_t wr_id = 0;
  std::shared_ptr<MemoryRegion> region;  // nullptr for a 0-byte receive
  uint64_t offset = 0;
  uint64_t length = 0;
  // When it was posted (trace::NowNs), while RPMA_SIM_TRACE is on; 0 otherwise.
  uint64_t trace_post_ns = 0;
};

class ReceiveQueue {
 public:
  explicit ReceiveQueue(uint32_t capacity) : capacity_(capacity) {}

  // kProvider (ENOMEM) when `capacity` receives are already posted.
  Status Post(const ReceiveRequest& request) {
    MutexLock lock(&mutex_);
    if (requests_.size() >= capacity_) return Status::kProvider;
    requests_.push_back(request);
    if (trace::On()) requests_.back().trace_post_ns = trace::NowNs();
    return Status::kOk;
  }

  // Takes the oldest posted receive; false if none is posted.
  bool Take(ReceiveRequest* request) {
    MutexLock lock(&mutex_);
    if (requests_.empty()) return false;
    *request = std::move(requests_.front());
    requests_.pop_front();
    return true;
  }

  // Takes every posted receive (to flush them).
  std::deque<ReceiveRequest> TakeAll() {
    MutexLock lock(&mutex_);
    std::deque<ReceiveRequest> all;
    all.swap(requests_);
    return all;
  }

 private:
  const uint32_t capacity_;
  Mutex mutex_;
  std::deque<ReceiveRequest> requests_ GUARDED_BY(mutex_);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_RECEIVE_QUEUE_H_
