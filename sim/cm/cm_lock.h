// cm_lock.h -- the process-wide lock that serialises connection-manager state changes.
#ifndef RPMA_SIM_CM_CM_LOCK_H_
#define RPMA_SIM_CM_CM_LOCK_H_

#include <mutex>

namespace rpma_sim {

// Held while ids, listeners and their registry change state. Never held while waiting for
// an event or calling back into user code.
inline std::mutex& CmMutex() {
  static std::mutex* mutex = new std::mutex();
  return *mutex;
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CM_LOCK_H_
