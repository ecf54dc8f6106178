// spin_budget.cc -- growing and shrinking a spin from the waits it saw.
#include "sim/common/spin_budget.h"

#include <algorithm>

namespace rpma_sim {

void SpinBudget::Record(int64_t waited_ns) {
  int64_t budget = ns();
  if (waited_ns <= budget) return;  // the spin covered it
  if (waited_ns <= kMaxNs) {
    ns_.store(std::min(kMaxNs, waited_ns + waited_ns / 4), std::memory_order_relaxed);
  } else {
    ns_.store(std::max(kMinNs, budget / 2), std::memory_order_relaxed);
  }
}

}  // namespace rpma_sim
