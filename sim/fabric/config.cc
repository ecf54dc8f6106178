// config.cc -- environment parsing and the process-wide settings.
#include "sim/fabric/config.h"

#include <stdlib.h>
#include <strings.h>

#include <mutex>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

std::mutex g_mutex;

DeviceCaps CapsFromEnvironment() {
  DeviceCaps caps;
  caps.persistent_memory = EnvFlag("RPMA_SIM_PMEM", caps.persistent_memory);
  caps.native_flush = EnvFlag("RPMA_SIM_NATIVE_FLUSH", caps.native_flush);
  caps.native_atomic_write = EnvFlag("RPMA_SIM_NATIVE_ATOMIC_WRITE", caps.native_atomic_write);
  caps.on_demand_paging = EnvFlag("RPMA_SIM_ODP", caps.on_demand_paging);
  caps.eadr = EnvFlag("RPMA_SIM_EADR", caps.eadr);
  const char* scope = getenv("RPMA_SIM_FLUSH_SCOPE");
  if (scope != nullptr && *scope != '\0') {
    if (strcasecmp(scope, "qp") == 0)
      caps.flush_scope_qp = true;
    else if (strcasecmp(scope, "range") != 0)
      SIM_LOG_WARNING("RPMA_SIM_FLUSH_SCOPE=%s is not one of range, qp; using range", scope);
  }
  return caps;
}

DeviceCaps& Caps() {
  static DeviceCaps caps = CapsFromEnvironment();
  return caps;
}

TransportKind TransportFromEnvironment() {
  const char* value = getenv("RPMA_SIM_TRANSPORT");
  if (value == nullptr || *value == '\0' || strcasecmp(value, "auto") == 0)
    return TransportKind::kAuto;
  if (strcasecmp(value, "inproc") == 0) return TransportKind::kInproc;
  if (strcasecmp(value, "tcp") == 0) return TransportKind::kTcp;
  if (strcasecmp(value, "shm") == 0) return TransportKind::kShm;
  SIM_LOG_WARNING("RPMA_SIM_TRANSPORT=%s is not one of auto, inproc, shm, tcp; using auto",
                  value);
  return TransportKind::kAuto;
}

TransportKind& Transport() {
  static TransportKind transport = TransportFromEnvironment();
  return transport;
}

}  // namespace

TransportKind GetTransport() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return Transport();
}

void SetTransport(TransportKind transport) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Transport() = transport;
}

bool ShmProcessVmEnabled() {
  static const bool enabled = EnvFlag("RPMA_SIM_SHM_PROCESS_VM", true);
  return enabled;
}

bool ShmDirectEnabled() {
  static const bool enabled = EnvFlag("RPMA_SIM_SHM_DIRECT", true);
  return enabled;
}

bool PersistenceReportEnabled() {
  static const bool enabled = EnvFlag("RPMA_SIM_PERSISTENCE_REPORT", true);
  return enabled;
}

bool ParseFlag(const char* text, bool* value) {
  for (const char* yes : {"1", "yes", "on", "true"}) {
    if (strcasecmp(text, yes) == 0) {
      *value = true;
      return true;
    }
  }
  for (const char* no : {"0", "no", "off", "false"}) {
    if (strcasecmp(text, no) == 0) {
      *value = false;
      return true;
    }
  }
  return false;
}

bool EnvFlag(const char* name, bool fallback) {
  const char* value = getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  bool flag;
  if (ParseFlag(value, &flag)) return flag;
  SIM_LOG_WARNING("%s=%s is not a boolean; using %d", name, value, fallback);
  return fallback;
}

DeviceCaps GetDeviceCaps() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return Caps();
}

void SetDeviceCaps(const DeviceCaps& caps) {
  std::lock_guard<std::mutex> lock(g_mutex);
  Caps() = caps;
}

}  // namespace rpma_sim
