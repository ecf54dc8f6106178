// librpma_points.h -- librpma's own fault injection: RPMA_FAULT_INJECTION=N fails the Nth
// fault point the process passes, as a librpma built with DEBUG_FAULT_INJECTION does.
//
// The points sit in the API layer (api/fault_point.h) in the same functions, in the same
// order and with the same error codes as librpma 1.3's (docs/librpma-compatibility.md,
// "librpma's fault-injection points").
// Each point passed counts once and prints `[#i]`; the Nth prints
// `[#N] [FAULT INJECTION: "<rpma_err_2str(code)>"]` and fails; later points count and print
// but never fail. The lines go to stderr in the default log format at DEBUG, whatever the log
// thresholds and the installed log function (librpma's RPMA_LOG_ALWAYS). Unset, or <= 0:
// no point counts or prints, and a point costs one load. SetLibrpmaFaultTarget (from
// rpma_sim_fault_point_set) replaces N at run time and starts the count again.
#ifndef RPMA_SIM_FAULT_LIBRPMA_POINTS_H_
#define RPMA_SIM_FAULT_LIBRPMA_POINTS_H_

#include <stdint.h>

#include <atomic>

namespace rpma_sim {

// N from RPMA_FAULT_INJECTION: -1 until the first point reads it, then N, or 0 when unset or
// <= 0 (the common case: a point then costs this one load); SetLibrpmaFaultTarget changes it.
extern std::atomic<int64_t> g_librpma_fault_target;

// N, reading RPMA_FAULT_INJECTION at the first call (unless SetLibrpmaFaultTarget came first).
int64_t LibrpmaFaultTarget();

// From now on the Nth point passed fails; the count of points passed starts again at 0.
// n == 0 turns the points off (they neither count nor print). Precondition: n >= 0.
void SetLibrpmaFaultTarget(int64_t n);

// Counts one point and prints its marker; true when it is the Nth, which then fails.
// `file`/`line` say where the point is, `function` is the librpma function it belongs to
// and `error` what it returns (rpma_err_2str).
bool PassLibrpmaFaultPoint(const char* file, int line, const char* function, const char* error);

// How many points the process has passed since RPMA_FAULT_INJECTION was read or the last
// SetLibrpmaFaultTarget (0 while disabled).
int64_t LibrpmaFaultPointsPassed();

// The point in the API layer: `code` is what it returns, and `error_name` names it
// (rpma_err_2str), called only while the points count: a point costs one load, not a call.
inline bool LibrpmaFaultPointFires(const char* file, int line, const char* function, int code,
                                   const char* (*error_name)(int)) {
  return g_librpma_fault_target.load(std::memory_order_relaxed) != 0 &&
         PassLibrpmaFaultPoint(file, line, function, error_name(code));
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_FAULT_LIBRPMA_POINTS_H_
