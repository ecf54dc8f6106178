// protection_domain.h -- the protection domain a peer allocates on the simulated device.
//
// It counts what was created in it (memory regions, queue pairs, shared receive queues) so
// that deallocating a busy domain fails with EBUSY, as ibv_dealloc_pd does.
#ifndef RPMA_SIM_VERBS_PROTECTION_DOMAIN_H_
#define RPMA_SIM_VERBS_PROTECTION_DOMAIN_H_

#include <atomic>
#include <memory>

#include "sim/common/status.h"
#include "sim/fabric/config.h"
#include "sim/fabric/node.h"
#include "sim/pmem/persistence_domain.h"
#include "sim/verbs/memory_region.h"

namespace rpma_sim {

class Device;

// Owned by shared_ptr (Allocate): a caller that finds it through a registered region (a
// raw pointer, valid under the region table's lock) may keep it beyond that lock with
// weak_from_this().
class ProtectionDomain : public std::enable_shared_from_this<ProtectionDomain> {
 public:
  // Captures the device's capabilities at allocation, as rpma_peer_new queries them.
  explicit ProtectionDomain(Device* device);
  // Writes its crash journal if RPMA_SIM_CRASH_JOURNAL asked for one (crash_recording.h).
  ~ProtectionDomain();
  // rpma_peer_new: a domain on `device`, after making the progress engine's reactor
  // (EnsureReactor). Everything of the process that needs it (sockets, and the timers of
  // connect timeouts, fault rules and stage holds) comes after a peer, so running out of
  // fds for it is this call's error and never a throw from deep inside a later one.
  // kProvider (logged) if the reactor cannot be made.
  static Status Allocate(Device* device, std::shared_ptr<ProtectionDomain>* out);

  Device* device() const { return device_; }
  // The fabric node this domain (the peer) is: each domain its own.
  const std::shared_ptr<Node>& node() const { return node_; }
  const DeviceCaps& caps() const { return caps_; }
  // The persistence model of this node's registered memory.
  PersistenceDomain& persistence() const { return *persistence_; }

  // Arms this node for a power failure (PersistenceDomain::Arm) while no remote operation
  // is copying, so that the values it keeps of bytes placed before are whole.
  void ArmForPowerFailure();

  // Power failure of this node: its queue pairs stop, no remote operation is still
  // copying, its memory reverts as `mode` says (seeded by `seed`), then its connections are
  // lost on both sides (as Node::Fail), so whoever sees the loss sees the reverted memory.
  // kInvalid, with nothing done, if the domain is not armed and `mode` is not kNone: what a
  // placement overwrote was not kept.
  // `keep`, in a torn mode, names the one unit that survives (PersistenceDomain::PowerFail).
  Status PowerFail(LossMode mode, uint64_t seed, const TornKeep* keep = nullptr);

  // Starts recording this node's crash points (PersistenceDomain::StartRecording), arming
  // it, while no remote operation is copying; each region's file is found from
  // /proc/self/maps. Stops and returns the journal, its regions' final contents taken while
  // no remote operation is copying.
  void StartCrashRecording();
  CrashJournal StopCrashRecording();

  // Registers memory in this domain. kProvider (EFAULT) when the range wraps around or is
  // not mapped in this process, as ibv_reg_mr fails when it cannot pin the pages.
  Status RegisterMemory(void* addr, size_t length, int access,
                        std::shared_ptr<MemoryRegion>* region);
  void DeregisterMemory(const std::shared_ptr<MemoryRegion>& region);

  // Objects other than memory regions (QPs, SRQs) that keep the domain busy.
  void AddUser() { users_.fetch_add(1); }
  void RemoveUser() { users_.fetch_sub(1); }

  // kProvider (EBUSY) if anything still lives in the domain.
  Status Deallocate();

 private:
  Device* device_;
  DeviceCaps caps_;
  const std::shared_ptr<Node> node_;
  const std::unique_ptr<PersistenceDomain> persistence_;
  std::atomic<int> users_{0};
  std::atomic<uint32_t> registrations_{0};  // regions registered so far (their ordinals)
};

// Arms every node of the process for a power failure, and those created from now on
// (PersistenceDomain::ArmAll), while no remote operation is copying.
void ArmAllForPowerFailure();
// Nodes created from now on are not armed (those armed stay so).
void StopArmingNewForPowerFailure();

// Reports every range of every node not durable (PersistenceDomain::ReportAll), with what
// peers placed by direct access up to now; returns how many.
size_t ReportAllNotDurable();

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_PROTECTION_DOMAIN_H_
