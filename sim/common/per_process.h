// per_process.h -- a process-wide object of which a fork() child gets its own.
//
// PerProcess<T> makes its T on first use and, in a child made by fork() (a new fork
// generation, fork_generation.h), makes the child a new T on the child's first use. The
// parent's T is kept as the child inherited it, never used or destroyed there: its locks
// may have been held by threads the child does not have, and its contents (listeners,
// regions, connections) are the parent's. It stays reachable, so that leak checkers do not
// report it.
//
// Lock-free: Get is two atomic loads once the object exists; a child's first Get cannot
// wait for a thread of its parent. Two threads making the first T at once both construct
// one and one is kept, so T's constructor must have no effect outside the object.
// PerProcess is constant-initialized and never destroyed, so it works during exit.
#ifndef RPMA_SIM_COMMON_PER_PROCESS_H_
#define RPMA_SIM_COMMON_PER_PROCESS_H_

#include <stdint.h>

#include <atomic>

#include "sim/common/fork_generation.h"

namespace rpma_sim {

template <typename T>
class PerProcess {
 public:
  constexpr PerProcess() = default;

  PerProcess(const PerProcess&) = delete;
  PerProcess& operator=(const PerProcess&) = delete;

  // This process's T, if it was made: null before its first Get (and in a fork child,
  // before the child's first Get).
  T* Peek() {
    Instance* instance = current_.load(std::memory_order_acquire);
    return instance != nullptr && instance->generation == ForkGeneration() ? &instance->object
                                                                           : nullptr;
  }

  // This process's T.
  T& Get() {
    const uint32_t generation = ForkGeneration();
    Instance* instance = current_.load(std::memory_order_acquire);
    if (instance != nullptr && instance->generation == generation) return instance->object;
    return Make(generation, instance);
  }

 private:
  struct Instance {
    explicit Instance(uint32_t made_in) : generation(made_in) {}
    const uint32_t generation;
    Instance* inherited = nullptr;  // the parent's, kept untouched
    T object{};
  };

  __attribute__((noinline)) T& Make(uint32_t generation, Instance* seen) {
    Instance* made = new Instance(generation);
    for (;;) {
      made->inherited = seen;
      if (current_.compare_exchange_strong(seen, made, std::memory_order_acq_rel))
        return made->object;
      if (seen != nullptr && seen->generation == generation) {
        delete made;  // another thread of this process made it first
        return seen->object;
      }
      // The current one is still an older generation's: replace what we saw.
    }
  }

  std::atomic<Instance*> current_{nullptr};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_PER_PROCESS_H_
