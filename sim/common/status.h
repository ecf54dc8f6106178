// status.h -- the simulator's own result codes.
//
// sim/ never sees librpma's RPMA_E_* codes; api/ maps each Status to one of them in a single
// place (api/status_map.h). Errors travel as values, never as exceptions.
#ifndef RPMA_SIM_COMMON_STATUS_H_
#define RPMA_SIM_COMMON_STATUS_H_

namespace rpma_sim {

enum class Status {
  kOk = 0,
  kInvalid,        // an argument the simulated hardware rejects
  kNoMemory,       // allocation failed
  kProvider,       // what a verbs or CM call would fail with (EBUSY, ENOMEM on a full queue, ...)
  kNotSupported,   // the simulated device lacks the capability
  kNoEvent,        // a non-blocking wait found no CM event
  kNoCompletion,   // a non-blocking wait found no completion event
  kUnknown,        // something that has no better name
  kAgain,          // temporarily unavailable: try again
  kSharedChannel,  // the completion channel is shared (a per-queue wait was asked of it)
  kNotSharedChannel,  // the completion channel is not shared (a shared wait was asked of it)
};

// A short English name of the status, for log lines.
const char* StatusName(Status status);

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_STATUS_H_
