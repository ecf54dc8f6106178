// status_map.h -- the one place where simulator results become librpma error codes.
#ifndef RPMA_SIM_API_STATUS_MAP_H_
#define RPMA_SIM_API_STATUS_MAP_H_

#include <librpma.h>

#include "sim/common/status.h"

inline int ToRpmaError(rpma_sim::Status status) {
  switch (status) {
    case rpma_sim::Status::kOk:
      return 0;
    case rpma_sim::Status::kInvalid:
      return RPMA_E_INVAL;
    case rpma_sim::Status::kNoMemory:
      return RPMA_E_NOMEM;
    case rpma_sim::Status::kProvider:
      return RPMA_E_PROVIDER;
    case rpma_sim::Status::kNotSupported:
      return RPMA_E_NOSUPP;
    case rpma_sim::Status::kNoEvent:
      return RPMA_E_NO_EVENT;
    case rpma_sim::Status::kNoCompletion:
      return RPMA_E_NO_COMPLETION;
    case rpma_sim::Status::kUnknown:
      return RPMA_E_UNKNOWN;
    case rpma_sim::Status::kAgain:
      return RPMA_E_AGAIN;
    case rpma_sim::Status::kSharedChannel:
      return RPMA_E_SHARED_CHANNEL;
    case rpma_sim::Status::kNotSharedChannel:
      return RPMA_E_NOT_SHARED_CHNL;
  }
  return RPMA_E_UNKNOWN;
}

#endif  // RPMA_SIM_API_STATUS_MAP_H_
