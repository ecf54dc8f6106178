// spin_budget.h -- how long a waiting thread looks again before it sleeps, learned from how
// long its waits lately took.
//
// Sleeping costs a wake-up, and where waking a thread whose core has halted is dear (a
// virtual machine: tens of microseconds) a wait that ends a little later is cheaper spent
// looking. A fixed spin either wastes the core on long waits or misses the waits just past
// it; this one grows and shrinks as the kernel's haltpoll governor does: a wait that a
// longer spin would have covered grows the budget to cover it (with a quarter more), up to
// kMaxNs; a wait longer than kMaxNs (an idle peer) halves it, down to kMinNs; a wait the
// spin covered leaves it. So a thread that waits for a peer's answer again and again (a
// client connecting one connection after another, the server accepting them) stops
// sleeping between them, and one whose peer is idle spins kMinNs per wait after a few.
//
// One budget may serve many waiters (sim/cm's: every CM event channel of the process, the
// endpoints' and the connections', since each connection's is new; the long waits among
// them, for a request on an idle endpoint or for a DISCONNECT, shrink it). Updates are
// relaxed, and two that race leave either one's value, which is as good. Constant-
// initialized and trivially destroyed, so one may live at namespace scope.
#ifndef RPMA_SIM_COMMON_SPIN_BUDGET_H_
#define RPMA_SIM_COMMON_SPIN_BUDGET_H_

#include <stdint.h>

#include <atomic>

namespace rpma_sim {

class SpinBudget {
 public:
  static constexpr int64_t kMinNs = 50 * 1000;
  static constexpr int64_t kMaxNs = 500 * 1000;

  constexpr SpinBudget() = default;

  // How long the next wait looks again before it sleeps.
  int64_t ns() const { return ns_.load(std::memory_order_relaxed); }

  // A wait that took `waited_ns` from its start until its event.
  void Record(int64_t waited_ns);

 private:
  std::atomic<int64_t> ns_{kMinNs};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_SPIN_BUDGET_H_
