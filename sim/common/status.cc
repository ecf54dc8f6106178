// status.cc -- names of the simulator's result codes.
#include "sim/common/status.h"

namespace rpma_sim {

const char* StatusName(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kInvalid:
      return "invalid argument";
    case Status::kNoMemory:
      return "out of memory";
    case Status::kProvider:
      return "provider error";
    case Status::kNotSupported:
      return "not supported";
    case Status::kNoEvent:
      return "no event";
    case Status::kNoCompletion:
      return "no completion";
    case Status::kUnknown:
      return "unknown";
    case Status::kAgain:
      return "try again";
    case Status::kSharedChannel:
      return "completion channel is shared";
    case Status::kNotSharedChannel:
      return "completion channel is not shared";
  }
  return "unknown";
}

}  // namespace rpma_sim
