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

// A slot is a namespace-scope global, constant-initialized and never destroyed (it owns
// nothing that needs a destructor), so asking it needs no initialization guard and works
// during the process's exit.
template <typename Gate>
class GateSlot {
 public:
  constexpr GateSlot() = default;

  void Set(std::shared_ptr<Gate> gate) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (holder_ == nullptr) holder_ = new std::shared_ptr<Gate>();  // kept for the process
    installed_.store(gate != nullptr, std::memory_order_release);
    *holder_ = std::move(gate);
  }

  // Whether a gate is installed: one atomic load, for the callers' fast paths.
  bool installed() const { return installed_.load(std::memory_order_acquire); }

  // The installed gate, or null.
  std::shared_ptr<Gate> Get() {
    if (!installed()) return nullptr;
    return GetInstalled();
  }

 private:
  __attribute__((noinline)) std::shared_ptr<Gate> GetInstalled() {
    std::lock_guard<std::mutex> lock(mutex_);
    return *holder_;
  }

  std::atomic<bool> installed_{false};
  std::mutex mutex_;
  std::shared_ptr<Gate>* holder_ = nullptr;  // guarded by mutex_
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_GATE_SLOT_H_
