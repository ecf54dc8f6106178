// crash_recording.cc -- the journals RPMA_SIM_CRASH_JOURNAL asks for.
#include "sim/verbs/crash_recording.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <string>

#include "sim/common/fork_generation.h"
#include "sim/common/log.h"
#include "sim/common/mutex.h"
#include "sim/common/per_process.h"
#include "sim/verbs/protection_domain.h"

namespace rpma_sim {
namespace {

// The nodes recording for the variable, and how many there were.
struct Recording {
  Mutex mutex;
  std::map<ProtectionDomain*, int> ordinals GUARDED_BY(mutex);
  int made GUARDED_BY(mutex) = 0;
  bool exit_registered GUARDED_BY(mutex) = false;
};

PerProcess<Recording> g_recording;  // a fork child records its own nodes (with %p)

// PATH with %p replaced, then ".N".
std::string JournalPath(const char* pattern, int ordinal) {
  std::string path;
  for (const char* c = pattern; *c != '\0'; ++c) {
    if (c[0] == '%' && c[1] == 'p') {
      path += std::to_string(getpid());
      ++c;
    } else {
      path += *c;
    }
  }
  return path + "." + std::to_string(ordinal);
}

void Write(ProtectionDomain* pd, int ordinal) {
  const char* pattern = getenv("RPMA_SIM_CRASH_JOURNAL");
  if (pattern == nullptr || *pattern == '\0') return;
  const std::string path = JournalPath(pattern, ordinal);
  std::string error;
  if (!pd->StopCrashRecording().WriteTo(path, &error))
    SIM_LOG_ERROR("crash states: %s", error.c_str());
}

// At exit: the journals of the nodes still alive.
void WriteAllAtExit() {
  Recording& recording = g_recording.Get();
  std::map<ProtectionDomain*, int> alive;
  {
    MutexLock lock(&recording.mutex);
    alive.swap(recording.ordinals);
  }
  for (const auto& entry : alive) Write(entry.first, entry.second);
}

}  // namespace

void BeginCrashJournalIfAsked(ProtectionDomain* pd) {
  const char* pattern = getenv("RPMA_SIM_CRASH_JOURNAL");
  if (pattern == nullptr || *pattern == '\0') return;
  if (ForkGeneration() > 0 && strstr(pattern, "%p") == nullptr) {
    // A fork child numbers its nodes from 1 again: its journals would replace its parent's.
    static std::atomic<bool> told{false};
    if (!told.exchange(true))
      SIM_LOG_INFO(
          "crash states: a fork child records no journal (RPMA_SIM_CRASH_JOURNAL=%s "
          "has no %%p to tell its files from its parent's)",
          pattern);
    return;
  }
  Recording& recording = g_recording.Get();
  {
    MutexLock lock(&recording.mutex);
    recording.ordinals[pd] = ++recording.made;
    if (!recording.exit_registered) {
      recording.exit_registered = true;
      atexit(WriteAllAtExit);
    }
  }
  pd->StartCrashRecording();
}

void EndCrashJournal(ProtectionDomain* pd) {
  Recording& recording = g_recording.Get();
  int ordinal = 0;
  {
    MutexLock lock(&recording.mutex);
    auto found = recording.ordinals.find(pd);
    if (found == recording.ordinals.end()) return;
    ordinal = found->second;
    recording.ordinals.erase(found);
  }
  Write(pd, ordinal);
}

}  // namespace rpma_sim
