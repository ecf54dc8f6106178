// event_fd.h -- a counting wait that becomes a pollable kernel fd when somebody asks for one.
//
// Signal() adds one pending event; Take() consumes one, waiting for it. Until fd() is first
// called no kernel fd exists: the count lives here and Take sleeps on a futex, so a
// connection whose owner never asks for its fds costs none. fd() creates an eventfd in
// semaphore mode holding the count so far, and from then on the eventfd is the count: it is
// readable while events are pending (level-triggered: poll, epoll), and Take honours the
// O_NONBLOCK the user may set on it (fcntl) by reporting "nothing pending" at once. Either
// sleep ends with EINTR when a signal whose handler has no SA_RESTART comes, as a read of a
// real completion or CM channel's fd does. The fd stays the same for the object's life.
#ifndef RPMA_SIM_COMMON_EVENT_FD_H_
#define RPMA_SIM_COMMON_EVENT_FD_H_

#include <stdint.h>

#include <atomic>

#include "sim/common/mutex.h"
#include "sim/common/spin_budget.h"

namespace rpma_sim {

class EventFd {
 public:
  // While no kernel fd exists, a taker spins kSpinNs before it sleeps, or as long as
  // `spin` says (spin_budget.h), and then tells `spin` how long its wait took. `spin` must
  // outlive this object.
  explicit EventFd(SpinBudget* spin = nullptr) : spin_(spin) {}
  ~EventFd();

  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  // The kernel fd, created on the first call; -1 if the kernel refused to create it (then
  // the next call tries again).
  int fd() const;

  // Adds one pending event. It wakes a taker after unlocking, so the caller keeps this
  // object alive through the call (its owner's shared_ptr), whatever a woken taker does.
  void Signal();

  enum class Taken {
    kYes,
    kNothing,      // the fd is non-blocking and nothing is pending (or an unexpected error)
    kInterrupted,  // a signal interrupted the sleep (EINTR)
  };
  // Consumes one pending event, waiting for it: first, while no kernel fd exists, looking
  // again for kSpinNs or the budget's time (yielding the core between looks), then
  // sleeping (on the futex, or in read(2) once the fd exists).
  Taken Take();

  // Consumes every pending event without waiting, whatever the fd's flags.
  void Drain();

 private:
  // An event that another thread signals within this (the other side of a connection set
  // up in this process, a completion about to come) costs neither thread a sleep and a
  // wake-up.
  static constexpr int64_t kSpinNs = 50 * 1000;
  // Wakes up to `count` takers asleep on wakes_.
  void WakeSleepers(int count) const;

  SpinBudget* const spin_;
  mutable Mutex mutex_;
  // Changed (under mutex_) by every Signal while no fd exists and by the fd's creation: the
  // futex word a taker sleeps on until then.
  mutable std::atomic<uint32_t> wakes_{0};
  // Atomics written under mutex_, read without it only to know whether to stop spinning.
  mutable std::atomic<uint64_t> pending_{0};  // while fd_ < 0
  mutable std::atomic<int> fd_{-1};           // set once
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_EVENT_FD_H_
