// config.h -- the one home of the simulator's configuration.
//
// Read once from the environment (RPMA_SIM_*) at first use; the C API in rpma_sim.h changes
// the same settings at run time. Device capabilities are read by rpma_peer_new, the way
// librpma queries a real device's capabilities when a peer is created.
#ifndef RPMA_SIM_FABRIC_CONFIG_H_
#define RPMA_SIM_FABRIC_CONFIG_H_

namespace rpma_sim {

// What the simulated RDMA device can do.
struct DeviceCaps {
  bool persistent_memory = true;     // RPMA_SIM_PMEM: memory behind the device is persistent
  bool native_flush = false;         // RPMA_SIM_NATIVE_FLUSH: IBV_WC_FLUSH instead of a read
  bool native_atomic_write = false;  // RPMA_SIM_NATIVE_ATOMIC_WRITE: IBV_WC_ATOMIC_WRITE
  bool on_demand_paging = false;     // RPMA_SIM_ODP: rpma_utils_ibv_context_is_odp_capable
  // Persistence model (sim/pmem): what a completed flush makes durable at the target.
  bool eadr = false;            // RPMA_SIM_EADR: a VISIBILITY flush is durable too
  bool flush_scope_qp = false;  // RPMA_SIM_FLUSH_SCOPE=qp: the portable (read) flush makes
                                // every earlier write of its queue pair durable
};

// Returns a snapshot of the current capabilities (thread-safe).
DeviceCaps GetDeviceCaps();

// Replaces the capabilities; peers created afterwards see the new values.
void SetDeviceCaps(const DeviceCaps& caps);

// How a connection reaches its peer (RPMA_SIM_TRANSPORT=auto|inproc|shm|tcp).
enum class TransportKind {
  kAuto,    // the same process: in process; an address of this host: shm; otherwise TCP
  kInproc,  // only peers of this process can be reached
  kShm,     // shared memory, even to a listener of this process; only peers of this host
  kTcp,     // always TCP, even to a listener of this process
};

TransportKind GetTransport();
void SetTransport(TransportKind transport);

// Whether the shared-memory transport may move payloads with process_vm_readv/writev
// (RPMA_SIM_SHM_PROCESS_VM, default yes); otherwise they go through the segment.
bool ShmProcessVmEnabled();

// Whether a peer on this host may execute one-sided operations on this process's memory
// itself, and this process on its peers' (RPMA_SIM_SHM_DIRECT, default yes; only where
// ShmProcessVmEnabled() too); otherwise every request goes through the rings to the
// target's threads.
bool ShmDirectEnabled();

// Whether a registered region of private anonymous memory (the heap) moves into a shared
// mapping at registration, so that a peer on this host reaches it with plain copies
// (RPMA_SIM_SHM_SHARE_HEAP, default yes; only where ShmDirectEnabled() too, and not while
// the transport is tcp or inproc).
bool ShmShareHeapEnabled();
// The setting alone (RPMA_SIM_SHM_SHARE_HEAP), whatever the others say.
bool ShmShareHeapSetting();

// Whether ranges placed and never made durable are reported when their connection ends
// (RPMA_SIM_PERSISTENCE_REPORT, default yes).
bool PersistenceReportEnabled();

// Parses a boolean word ("1", "yes", "on", "true" / "0", "no", "off", "false", any case).
// False if `text` is none of them.
bool ParseFlag(const char* text, bool* value);

// The boolean environment variable `name` ("1", "yes", "on", "true" / "0", "no", "off",
// "false"), or `fallback` when it is unset or not one of those words: EnvFlagOr("X", true)
// reads "X, or true".
bool EnvFlagOr(const char* name, bool fallback);

}  // namespace rpma_sim

#endif  // RPMA_SIM_FABRIC_CONFIG_H_
