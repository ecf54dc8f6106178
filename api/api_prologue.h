// api_prologue.h -- the first statement of every librpma function that can fail.
//
// RPMA_API_PROLOGUE() asks the simulator's call seam (sim/common/call_seam.h) whether this
// call is to fail at once (fault injection); if so the function returns that error before it
// looks at its arguments, and the call has no effect. Otherwise it costs one atomic load.
#ifndef RPMA_SIM_API_API_PROLOGUE_H_
#define RPMA_SIM_API_API_PROLOGUE_H_

#include "api/status_map.h"
#include "sim/common/call_seam.h"

#define RPMA_API_PROLOGUE()                                                                  \
  do {                                                                                       \
    rpma_sim::Status rpma_api_injected_ = rpma_sim::CheckCall(__func__);                     \
    if (rpma_api_injected_ != rpma_sim::Status::kOk) return ToRpmaError(rpma_api_injected_); \
  } while (0)

#endif  // RPMA_SIM_API_API_PROLOGUE_H_
