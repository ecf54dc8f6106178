// fault_point.h -- one of librpma's fault points (RPMA_FAULT_INJECTION=N), where librpma 1.3
// has it: after the function's argument checks, before its first effect.
//
// RPMA_FAULT_POINT(code, "rpma_fn") returns `code` from the enclosing function when this is
// the Nth point the process passes; RPMA_FAULT_FIRES(code, "rpma_fn") only says so, for a
// point whose failure must first undo something (as librpma's goto clean-ups do). `rpma_fn`
// is the librpma function the point belongs to: an internal one (rpma_conn_new,
// rpma_mr_write, ...) where the public call reaches its points through it. The counter and
// the marker lines: sim/fault/librpma_points.h.
#ifndef RPMA_SIM_API_FAULT_POINT_H_
#define RPMA_SIM_API_FAULT_POINT_H_

#include <librpma.h>

#include "sim/fault/librpma_points.h"

#define RPMA_FAULT_FIRES(code, function) \
  rpma_sim::LibrpmaFaultPointFires(__FILE__, __LINE__, function, code, rpma_err_2str)

#define RPMA_FAULT_POINT(code, function)                 \
  do {                                                   \
    if (RPMA_FAULT_FIRES(code, function)) return (code); \
  } while (0)

#endif  // RPMA_SIM_API_FAULT_POINT_H_
