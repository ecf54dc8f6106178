// librpma_points.cc -- the process-wide counter of librpma's fault points.
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
  static const int64_t target = [] {
    const char* value = getenv("RPMA_FAULT_INJECTION");
    int64_t n = value != nullptr ? atoll(value) : 0;  // atoi, as librpma reads it
    n = n > 0 ? n : 0;
    g_librpma_fault_target.store(n, std::memory_order_relaxed);
    return n;
  }();
  return target;
}

bool PassLibrpmaFaultPoint(const char* file, int line, const char* function, const char* error) {
  if (LibrpmaFaultTarget() == 0) return false;  // the first point: it was not read yet
  int64_t ordinal = g_passed.fetch_add(1) + 1;
  if (ordinal == LibrpmaFaultTarget()) {
    LogAlways(file, line, function, "[#%lld] [FAULT INJECTION: \"%s\"]",
              static_cast<long long>(ordinal), error);
    return true;
  }
  LogAlways(file, line, function, "[#%lld]", static_cast<long long>(ordinal));
  return false;
}

int64_t LibrpmaFaultPointsPassed() { return g_passed.load(); }

}  // namespace rpma_sim
