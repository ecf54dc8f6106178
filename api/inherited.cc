// inherited.cc -- refusing the handles a fork child inherited, and keeping those it let go.
#include "api/inherited.h"

#include <vector>

#include "sim/common/log.h"
#include "sim/common/mutex.h"
#include "sim/common/per_process.h"

namespace {

// The handles this process let go of that its parent made.
struct KeptHandles {
  rpma_sim::Mutex mutex;
  std::vector<const ProcessOwned*> handles GUARDED_BY(mutex);
};

rpma_sim::PerProcess<KeptHandles> g_kept;

}  // namespace

bool NoteInherited(const char* call, const char* what) {
  SIM_LOG_ERROR(
      "%s: the %s was made by this process's parent before it forked; a child "
      "cannot use its parent's RDMA objects (it makes its own)",
      call, what);
  return true;
}

void KeepInherited(const ProcessOwned* handle) {
  KeptHandles& kept = g_kept.Get();
  rpma_sim::MutexLock lock(&kept.mutex);
  kept.handles.push_back(handle);
}
