// cm_lock.h -- the process-wide lock that serialises connection-manager state changes.
#ifndef RPMA_SIM_CM_CM_LOCK_H_
#define RPMA_SIM_CM_CM_LOCK_H_

#include "sim/common/mutex.h"
#include "sim/common/per_process.h"

namespace rpma_sim {

// Held while ids, listeners and their registry change state. Never held while waiting for
// an event or calling back into user code. A fork child has its own (per_process.h): the
// parent's may have been held by a thread the child does not have.
inline Mutex& CmMutex() {
  static PerProcess<Mutex> mutex;
  return mutex.Get();
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CM_LOCK_H_
