// ptrace_permit.cc -- naming the peer process that may use process_vm on this one (Yama).
#include "sim/transport/ptrace_permit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include <atomic>

#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/transport/proc_maps.h"

namespace rpma_sim {
namespace {

int KernelYamaScope() {
  FILE* file = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
  if (file == nullptr) return -1;
  int scope = -1;
  if (fscanf(file, "%d", &scope) != 1) scope = -1;
  fclose(file);
  return scope;
}

int KernelSetPtracer(int pid) {
  return prctl(PR_SET_PTRACER, static_cast<unsigned long>(pid), 0, 0, 0) == 0 ? 0 : errno;
}

constexpr PtracePermits::System kKernel{KernelYamaScope, MapsSegment, KernelSetPtracer};

std::atomic<const PtracePermits::System*> g_system{&kKernel};
PerProcess<PtracePermits> g_permits;

}  // namespace

PtracePermits& PtracePermits::Get() { return g_permits.Get(); }

void PtracePermits::SetSystemForTest(const System* system) {
  g_system.store(system != nullptr ? system : &kKernel);
}

int PtracePermits::YamaScope() { return g_system.load()->yama_scope(); }

PermitOutcome PtracePermits::Grant(int peer, const std::string& segment) {
  const System& system = *g_system.load();
  int scope = system.yama_scope();
  if (scope <= 0) return PermitOutcome::kNotNeeded;
  if (scope >= 2) return PermitOutcome::kRefused;
  // Never pid 0 (no one), nor init (every process descends from it), nor a process that
  // does not map the segment (a peer that lies in the header).
  if (peer <= 1 || !system.maps_segment(peer, segment)) {
    SIM_LOG_NOTICE("Yama: process %d does not map segment %s; it is not named", peer,
                   segment.c_str());
    return PermitOutcome::kRefused;
  }
  int named;
  {
    MutexLock lock(&mutex_);
    while (changing_) changed_.Wait(&mutex_);
    named = named_;
    if (named == peer) ++holds_;
    changing_ = named == 0;
  }
  if (named == peer) return PermitOutcome::kGranted;
  if (named != 0) {
    SIM_LOG_INFO(
        "Yama: process %d may use process_vm on this process; process %d may not "
        "while it does (a process names one)",
        named, peer);
    return PermitOutcome::kHeldByAnother;
  }
  int error = system.set_ptracer(peer);
  {
    MutexLock lock(&mutex_);
    changing_ = false;
    if (error == 0) {
      named_ = peer;
      holds_ = 1;
    }
  }
  changed_.SignalAll();
  if (error == 0) return PermitOutcome::kGranted;
  SIM_LOG_NOTICE(
      "Yama: prctl(PR_SET_PTRACER, %d): %s; that process may not use process_vm "
      "on this one",
      peer, strerror(error));
  return PermitOutcome::kRefused;
}

void PtracePermits::Release(int peer) {
  {
    MutexLock lock(&mutex_);
    while (changing_) changed_.Wait(&mutex_);
    if (named_ != peer || peer == 0 || --holds_ > 0) return;
    changing_ = true;
  }
  int error = g_system.load()->set_ptracer(0);
  {
    MutexLock lock(&mutex_);
    named_ = 0;
    changing_ = false;
  }
  changed_.SignalAll();
  if (error != 0) SIM_LOG_NOTICE("Yama: prctl(PR_SET_PTRACER, 0): %s", strerror(error));
}

int PtracePermits::named() {
  MutexLock lock(&mutex_);
  return named_;
}

const char* PermitOutcomeText(PermitOutcome outcome) {
  switch (outcome) {
    case PermitOutcome::kNotNeeded:
      return "not needed";
    case PermitOutcome::kGranted:
      return "named with PR_SET_PTRACER";
    case PermitOutcome::kHeldByAnother:
      return "another peer process is named";
    case PermitOutcome::kRefused:
      return "refused";
  }
  return "?";
}

}  // namespace rpma_sim
