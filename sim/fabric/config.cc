// config.cc -- environment parsing and the process-wide settings.
#include "sim/fabric/config.h"

#include <stdlib.h>
#include <strings.h>

#include <atomic>
#include <initializer_list>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

// The settings are atomics, read and written without a lock: a fork child inherits them as
// they are, and no lock a thread of its parent held can stop it. Each is read from the
// environment at its first use (a value of -1 / 0: not yet).

DeviceCaps CapsFromEnvironment() {
  DeviceCaps caps;
  caps.persistent_memory = EnvFlagOr("RPMA_SIM_PMEM", caps.persistent_memory);
  caps.native_flush = EnvFlagOr("RPMA_SIM_NATIVE_FLUSH", caps.native_flush);
  caps.native_atomic_write = EnvFlagOr("RPMA_SIM_NATIVE_ATOMIC_WRITE", caps.native_atomic_write);
  caps.on_demand_paging = EnvFlagOr("RPMA_SIM_ODP", caps.on_demand_paging);
  caps.eadr = EnvFlagOr("RPMA_SIM_EADR", caps.eadr);
  const char* scope = getenv("RPMA_SIM_FLUSH_SCOPE");
  if (scope != nullptr && *scope != '\0') {
    if (strcasecmp(scope, "qp") == 0)
      caps.flush_scope_qp = true;
    else if (strcasecmp(scope, "range") != 0)
      SIM_LOG_WARNING("RPMA_SIM_FLUSH_SCOPE=%s is not one of range, qp; using range", scope);
  }
  return caps;
}

// The capabilities as bits, with kCapsSet once they are set.
constexpr uint32_t kCapsSet = 1u << 31;

uint32_t CapsToBits(const DeviceCaps& caps) {
  return kCapsSet | (caps.persistent_memory ? 1u : 0) | (caps.native_flush ? 2u : 0) |
         (caps.native_atomic_write ? 4u : 0) | (caps.on_demand_paging ? 8u : 0) |
         (caps.eadr ? 16u : 0) | (caps.flush_scope_qp ? 32u : 0);
}

DeviceCaps CapsFromBits(uint32_t bits) {
  DeviceCaps caps;
  caps.persistent_memory = bits & 1u;
  caps.native_flush = bits & 2u;
  caps.native_atomic_write = bits & 4u;
  caps.on_demand_paging = bits & 8u;
  caps.eadr = bits & 16u;
  caps.flush_scope_qp = bits & 32u;
  return caps;
}

std::atomic<uint32_t> g_caps{0};

TransportKind TransportFromEnvironment() {
  const char* value = getenv("RPMA_SIM_TRANSPORT");
  if (value == nullptr || *value == '\0' || strcasecmp(value, "auto") == 0)
    return TransportKind::kAuto;
  if (strcasecmp(value, "inproc") == 0) return TransportKind::kInproc;
  if (strcasecmp(value, "tcp") == 0) return TransportKind::kTcp;
  if (strcasecmp(value, "shm") == 0) return TransportKind::kShm;
  SIM_LOG_WARNING("RPMA_SIM_TRANSPORT=%s is not one of auto, inproc, shm, tcp; using auto", value);
  return TransportKind::kAuto;
}

std::atomic<int> g_transport{-1};

}  // namespace

TransportKind GetTransport() {
  int transport = g_transport.load(std::memory_order_acquire);
  if (transport < 0) {
    // Two first readers may both parse the environment; the first value stored stays.
    int read = static_cast<int>(TransportFromEnvironment());
    if (g_transport.compare_exchange_strong(transport, read, std::memory_order_acq_rel))
      transport = read;
  }
  return static_cast<TransportKind>(transport);
}

void SetTransport(TransportKind transport) {
  g_transport.store(static_cast<int>(transport), std::memory_order_release);
}

bool ShmProcessVmEnabled() {
  static const bool enabled = EnvFlagOr("RPMA_SIM_SHM_PROCESS_VM", true);
  return enabled;
}

bool ShmDirectEnabled() {
  static const bool enabled = EnvFlagOr("RPMA_SIM_SHM_DIRECT", true);
  return enabled;
}

bool ShmShareHeapSetting() {
  static const bool enabled = EnvFlagOr("RPMA_SIM_SHM_SHARE_HEAP", true);
  return enabled;
}

bool ShmShareHeapEnabled() {
  const TransportKind transport = GetTransport();
  return ShmShareHeapSetting() && ShmDirectEnabled() && transport != TransportKind::kTcp &&
         transport != TransportKind::kInproc;
}

bool PersistenceReportEnabled() {
  static const bool enabled = EnvFlagOr("RPMA_SIM_PERSISTENCE_REPORT", true);
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

bool EnvFlagOr(const char* name, bool fallback) {
  const char* value = getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  bool flag;
  if (ParseFlag(value, &flag)) return flag;
  SIM_LOG_WARNING("%s=%s is not a boolean; using %d", name, value, fallback);
  return fallback;
}

DeviceCaps GetDeviceCaps() {
  uint32_t bits = g_caps.load(std::memory_order_acquire);
  if (bits == 0) {
    uint32_t read = CapsToBits(CapsFromEnvironment());
    if (g_caps.compare_exchange_strong(bits, read, std::memory_order_acq_rel)) bits = read;
  }
  return CapsFromBits(bits);
}

void SetDeviceCaps(const DeviceCaps& caps) {
  g_caps.store(CapsToBits(caps), std::memory_order_release);
}

}  // namespace rpma_sim
