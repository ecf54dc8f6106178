// gate_slot.h -- where a seam keeps the hook installed in it, if any.
//
// A seam (a function every case of something passes through) asks its hook, when one is
// installed, what to do; fault injection installs them. With none installed, asking costs
// one atomic load. A hook may be replaced or removed at any time: a caller that already took
// it keeps it alive until it is done with it.
#ifndef RPMA_SIM_COMMON_GATE_SLOT_H_
#define RPMA_SIM_COMMON_GATE_SLOT_H_

#include <atomic>
#include <memory>
#include <mutex>

namespace rpma_sim {

template <typename Gate>
class GateSlot {
 public:
  void Set(std::shared_ptr<Gate> gate) {
    std::lock_guard<std::mutex> lock(mutex_);
    installed_.store(gate != nullptr, std::memory_order_release);
    gate_ = std::move(gate);
  }

  // The installed gate, or null (at the cost of one atomic load when none is).
  std::shared_ptr<Gate> Get() {
    if (!installed_.load(std::memory_order_acquire)) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    return gate_;
  }

 private:
  std::atomic<bool> installed_{false};
  std::mutex mutex_;
  std::shared_ptr<Gate> gate_;  // guarded by mutex_
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_GATE_SLOT_H_
