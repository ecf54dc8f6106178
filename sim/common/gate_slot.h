// gate_slot.h -- where a seam keeps the hook installed in it, if any.
//
// A seam (a function every case of something passes through) asks its hook, when one is
// installed, what to do; fault injection installs them. With none installed, asking costs
// two atomic loads. A hook may be replaced or removed at any time: a caller that already took
// it keeps it alive until it is done with it. A fork child starts with none installed (its
// fault plan is its own, per_process.h).
#ifndef RPMA_SIM_COMMON_GATE_SLOT_H_
#define RPMA_SIM_COMMON_GATE_SLOT_H_

#include <atomic>
#include <memory>
#include "sim/common/mutex.h"
#include "sim/common/per_process.h"

namespace rpma_sim {

// A slot is a namespace-scope global, constant-initialized and never destroyed (it owns
// nothing that needs a destructor), so asking it needs no initialization guard and works
// during the process's exit.
template <typename Gate>
class GateSlot {
 public:
  constexpr GateSlot() = default;

  void Set(std::shared_ptr<Gate> gate) {
    Held& held = held_.Get();
    MutexLock lock(&held.mutex);
    held.installed.store(gate != nullptr, std::memory_order_release);
    held.gate = std::move(gate);
  }

  // Whether a gate is installed, for the callers' fast paths.
  bool installed() const { return held_.Get().installed.load(std::memory_order_acquire); }

  // The installed gate, or null.
  std::shared_ptr<Gate> Get() {
    if (!installed()) return nullptr;
    return GetInstalled();
  }

 private:
  struct Held {
    std::atomic<bool> installed{false};
    Mutex mutex;
    std::shared_ptr<Gate> gate GUARDED_BY(mutex);
  };

  __attribute__((noinline)) std::shared_ptr<Gate> GetInstalled() {
    Held& held = held_.Get();
    MutexLock lock(&held.mutex);
    return held.gate;
  }

  mutable PerProcess<Held> held_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_GATE_SLOT_H_
