// event_fd.h -- a counting wait that becomes a pollable kernel fd when somebody asks for one.
//
// Signal() adds one pending event; Take() consumes one, waiting for it. Until fd() is first
// called, or a Take has to sleep, no kernel fd exists: the count lives here, so a
// connection whose owner never asks for its fds nor blocks on them costs none. fd() creates
// an eventfd in semaphore mode holding the count so far, and from then on the eventfd is the
// count: it is readable while events are pending (level-triggered: poll, epoll), and Take
// honours the O_NONBLOCK the user may set on it (fcntl) by reporting "nothing pending" at
// once. A Take that sleeps does so in read(2) on it, as a wait on a real completion or CM
// channel does, so a signal whose handler has no SA_RESTART interrupts it. The fd stays
// the same for the object's life.
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
  // sleeping in read(2) on the fd (created for it; on a condition variable if the kernel
  // refuses one).
  Taken Take();

  // Consumes every pending event without waiting, whatever the fd's flags.
  void Drain();

 private:
  // An event that another thread signals within this (the other side of a connection set
  // up in this process, a completion about to come) costs neither thread a sleep and a
  // wake-up.
  static constexpr int64_t kSpinNs = 50 * 1000;
  // Take's note that it consumed a count of its own (no fd is involved).
  static constexpr int kTakenHere = -2;

  SpinBudget* const spin_;
  mutable Mutex mutex_;
  mutable CondVar signalled_;  // an event, or the fd was created
  // Atomics written under mutex_, read without it only to know whether to stop spinning.
  mutable std::atomic<uint64_t> pending_{0};  // while fd_ < 0
  mutable std::atomic<int> fd_{-1};           // set once
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_EVENT_FD_H_
