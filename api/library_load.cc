// library_load.cc -- what librpma does as it loads and unloads, before and after any call:
// syslog is opened ("rpma", LOG_PID, LOG_LOCAL7) and closed, as librpma's constructor and
// destructor do, so that an application that calls openlog() for itself afterwards keeps its
// own identity and facility (librpma's messages then go out under them too); and the
// RPMA_SIM_TRACE file is opened, so that it is there even if the process never reaches an
// event. (Tools that link the simulator without the API, rpma-sim-info, do neither.)
#include <syslog.h>

#include "sim/common/trace.h"

namespace {

__attribute__((constructor)) void OpenAtLoad() {
  openlog("rpma", LOG_PID, LOG_LOCAL7);
  rpma_sim::trace::OpenAtLoad();
}

__attribute__((destructor)) void CloseAtUnload() { closelog(); }

}  // namespace
