// librpma_points.cc -- the process-wide target and counter of librpma's fault points.
#include "sim/fault/librpma_points.h"

#include <stdlib.h>

#include <atomic>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

std::atomic<int64_t> g_passed{0};

}  // namespace

std::atomic<int64_t> g_librpma_fault_target{-1};

int64_t LibrpmaFaultTarget() {
  int64_t target = g_librpma_fault_target.load(std::memory_order_acquire);
  if (target >= 0) return target;
  const char* value = getenv("RPMA_FAULT_INJECTION");
  int64_t n = value != nullptr ? atoll(value) : 0;  // atoi, as librpma reads it
  n = n > 0 ? n : 0;
  // Only the first reader (or an earlier SetLibrpmaFaultTarget) decides.
  g_librpma_fault_target.compare_exchange_strong(target, n, std::memory_order_acq_rel);
  return g_librpma_fault_target.load(std::memory_order_acquire);
}

void SetLibrpmaFaultTarget(int64_t n) {
  // The count restarts before the new target is seen, so no point of the new run is lost.
  g_passed.store(0);
  g_librpma_fault_target.store(n, std::memory_order_release);
}

bool PassLibrpmaFaultPoint(const char* file, int line, const char* function, const char* error) {
  const int64_t target = LibrpmaFaultTarget();
  if (target == 0) return false;  // the first point, and the variable says no
  int64_t ordinal = g_passed.fetch_add(1) + 1;
  if (ordinal == target) {
    LogAlways(file, line, function, "[#%lld] [FAULT INJECTION: \"%s\"]\n",
              static_cast<long long>(ordinal), error);
    return true;
  }
  LogAlways(file, line, function, "[#%lld]\n", static_cast<long long>(ordinal));
  return false;
}

int64_t LibrpmaFaultPointsPassed() { return g_passed.load(); }

}  // namespace rpma_sim
