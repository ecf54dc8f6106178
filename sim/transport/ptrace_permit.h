// ptrace_permit.h -- naming the peer process that may use process_vm on this one (Yama).
//
// Where Yama's ptrace_scope is 1 (Ubuntu's default), a process may read and write another's
// memory with process_vm only if it is the other's ancestor, or the other named it with
// prctl(PR_SET_PTRACER). The kernel keeps one name per process. So the first peer process
// that asks is named, and stays named while any of its connections holds the permit; a
// connection to another process meanwhile does without process_vm (it still maps what the
// peer shares: docs/transports.md), and once the last holder lets go the next connection
// may name its peer. Without Yama, or at scope 0, nothing needs naming; at 2 or 3 naming
// does not help (only a privileged process, or none, may then use process_vm).
//
// A fork child starts with no one named: the kernel's name is per process and not
// inherited. No lock is held across the prctl: a grant or release in progress makes the
// others wait on a condition variable.
#ifndef RPMA_SIM_TRANSPORT_PTRACE_PERMIT_H_
#define RPMA_SIM_TRANSPORT_PTRACE_PERMIT_H_

#include <string>

#include "sim/common/mutex.h"

namespace rpma_sim {

enum class PermitOutcome {
  kNotNeeded,      // no Yama, or ptrace_scope 0: the kernel's usual rules decide
  kGranted,        // the peer is named (now, or already for another connection)
  kHeldByAnother,  // another peer process is named: this one may not use process_vm here
  kRefused,        // naming cannot help (scope 2 or 3), or prctl failed
};

class PtracePermits {
 public:
  // What the permits ask of the kernel; tests replace it (SetSystemForTest).
  struct System {
    int (*yama_scope)();  // Yama's ptrace_scope, or -1 without Yama
    // Whether process `pid` maps the segment `name` (proc_maps.h).
    bool (*maps_segment)(int pid, const std::string& name);
    int (*set_ptracer)(int pid);  // prctl(PR_SET_PTRACER, pid): 0, or an errno value
  };

  // This process's permits.
  static PtracePermits& Get();
  // Replaces the kernel for every process made from here on (forked children too), or
  // restores it (null). Only with no permit held.
  static void SetSystemForTest(const System* system);
  // Yama's ptrace_scope as the permits see it, or -1 without Yama.
  static int YamaScope();

  PtracePermits() = default;
  PtracePermits(const PtracePermits&) = delete;
  PtracePermits& operator=(const PtracePermits&) = delete;

  // Names `peer` (a pid, read from the header of `segment`, which the peer writes) as the
  // process that may use process_vm on this one, if Yama needs it, the peer maps that
  // segment, and no other peer holds the permit. A name lets the named process's
  // descendants in too, so a pid that is not the peer's is refused. Each kGranted is one
  // hold, ended by Release.
  PermitOutcome Grant(int peer, const std::string& segment);
  // Ends one hold of `peer`'s permit; the last one takes the name back.
  void Release(int peer);
  // The peer named now, or 0.
  int named();

 private:
  Mutex mutex_;
  CondVar changed_;  // a prctl in progress ended
  bool changing_ GUARDED_BY(mutex_) = false;
  int named_ GUARDED_BY(mutex_) = 0;
  int holds_ GUARDED_BY(mutex_) = 0;
};

// The words a log line or rpma-sim-info uses for an outcome.
const char* PermitOutcomeText(PermitOutcome outcome);

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_PTRACE_PERMIT_H_
