// call_errors.h -- which error codes a librpma function can return (for `call` fault rules).
#ifndef RPMA_SIM_FAULT_CALL_ERRORS_H_
#define RPMA_SIM_FAULT_CALL_ERRORS_H_

#include <string>

#include "sim/common/status.h"

namespace rpma_sim {

// Whether `function` is one of librpma 1.3's 82 functions that return an error code.
bool IsLibrpmaFunction(const std::string& function);

// Whether librpma 1.3's `function` can return `error`.
bool CanReturn(const std::string& function, Status error);

}  // namespace rpma_sim

#endif  // RPMA_SIM_FAULT_CALL_ERRORS_H_
