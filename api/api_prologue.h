// api_prologue.h -- the first statement of every librpma function that can fail.
//
// RPMA_API_PROLOGUE() asks the simulator's call seam (sim/common/call_seam.h) whether this
// call is to fail at once (fault injection); if so the function returns that error before it
// looks at its arguments, and the call has no effect. Otherwise it costs one atomic load.
//
// RPMA_API_PROLOGUE_ENDING(end) is the prologue of a function that librpma ends its object
// with whatever it returns (the deleters free it and set *ptr to NULL; rpma_conn_req_connect
// consumes its request): an injected error comes after `end` ran, so a program correct under
// librpma leaks nothing. `end` is the function's own call again (a deleter) or the deleter of
// what it consumes; its calls do not pass the seam (InternalCall).
#ifndef RPMA_SIM_API_API_PROLOGUE_H_
#define RPMA_SIM_API_API_PROLOGUE_H_

#include "api/status_map.h"
#include "sim/common/call_seam.h"

#define RPMA_API_PROLOGUE_ENDING(end)                                    \
  do {                                                                   \
    rpma_sim::Status rpma_api_injected_ = rpma_sim::CheckCall(__func__); \
    if (rpma_api_injected_ != rpma_sim::Status::kOk) {                   \
      {                                                                  \
        rpma_sim::InternalCall rpma_api_internal_;                       \
        (void)(end);                                                     \
      }                                                                  \
      return ToRpmaError(rpma_api_injected_);                            \
    }                                                                    \
  } while (0)

#define RPMA_API_PROLOGUE() RPMA_API_PROLOGUE_ENDING(0)

#endif  // RPMA_SIM_API_API_PROLOGUE_H_
