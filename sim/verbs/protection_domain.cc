// protection_domain.cc -- allocation bookkeeping of a protection domain.
#include "sim/verbs/protection_domain.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "sim/common/log.h"
#include "sim/fabric/config.h"
#include "sim/fabric/io_service.h"
#include "sim/transport/file_backing.h"
#include "sim/verbs/crash_recording.h"
#include "sim/verbs/direct_target.h"

namespace rpma_sim {
namespace {

uintptr_t PageSize() {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Whether every page of [start, start + length) is mapped in this process: where ibv_reg_mr
// would fail to pin the pages (EFAULT). mincore(2) answers ENOMEM for a range with a hole
// and, unlike msync, reads and names no byte of the range, so memcheck sees no access to
// the page-rounded bytes around the caller's buffer. Asked a chunk at a time: the answer
// vector has a byte per page.
bool IsMapped(uintptr_t start, size_t length) {
  const uintptr_t page = PageSize();
  uintptr_t first = start & ~(page - 1);
  const uintptr_t end = (start + length + page - 1) & ~(page - 1);
  unsigned char resident[4096];
  while (first < end) {
    size_t chunk = std::min<uintptr_t>(end - first, sizeof(resident) * page);
    if (mincore(reinterpret_cast<void*>(first), chunk, resident) != 0) return false;
    first += chunk;
  }
  return true;
}

// Whether ibv_reg_mr could pin the mapped pages of [start, start + length) for `access`:
// ib_umem_get fails (EFAULT) on pages the process may not read (PROT_NONE), and, where the
// access lets anyone write the region, on pages it may not write (FOLL_WRITE). A process
// whose /proc/self/maps cannot be read is believed.
bool PagesPinnable(uintptr_t start, size_t length, int access) {
  const int writes = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
                     IBV_ACCESS_MW_BIND;
  const bool write = (access & writes) != 0;
  bool pinnable = true;
  if (!VisitMappings(start, start + length, [&](const MapsEntry& mapping) {
        pinnable = mapping.perms[0] == 'r' && (!write || mapping.perms[1] == 'w');
        return pinnable;
      }))
    return true;
  return pinnable;
}

// The moved pages a region on [addr, addr + length) holds (shared_pages.h). A region a peer
// may write or read moves its whole pages, unless a region registered before is on them
// (moved already, they are shared; not moved, its peers may be reaching it with
// process_vm, which a move would make fail for a moment). One no peer reaches moves
// nothing, but holds pages moved for another: moving them back while it is registered
// would make a copy into it by process_vm (a read's bytes) fail for a moment.
std::unique_ptr<SharedPages> ShareForPeers(void* addr, size_t length, int access) {
  if (!ShmShareHeapEnabled()) return nullptr;
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)) == 0)
    return SharedPages::Share(addr, length, PageMoves::kOnlyIfMoved);
  const uintptr_t page = PageSize();
  const uintptr_t first = (reinterpret_cast<uintptr_t>(addr) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(addr) + length) & ~(page - 1);
  bool others_there = false;
  if (end > first)
    MemoryRegionTable::Get().ForEachOverlapping(reinterpret_cast<void*>(first), end - first,
                                                [&](const MemoryRegion&) { others_there = true; });
  return SharedPages::Share(addr, length,
                            others_there ? PageMoves::kOnlyIfMoved : PageMoves::kAllowed);
}

}  // namespace

ProtectionDomain::ProtectionDomain(Device* device)
    : device_(device),
      caps_(GetDeviceCaps()),
      node_(std::make_shared<Node>()),
      persistence_(new PersistenceDomain(caps_)) {
  BeginCrashJournalIfAsked(this);
}

ProtectionDomain::~ProtectionDomain() { EndCrashJournal(this); }

Status ProtectionDomain::Allocate(Device* device, std::shared_ptr<ProtectionDomain>* out) {
  std::string no_reactor;
  if (!EnsureReactor(&no_reactor)) {
    SIM_LOG_ERROR("ibv_alloc_pd: the progress engine cannot be made: %s", no_reactor.c_str());
    return Status::kProvider;
  }
  *out = std::make_shared<ProtectionDomain>(device);
  return Status::kOk;
}

Status ProtectionDomain::RegisterMemory(void* addr, size_t length, int access,
                                        std::shared_ptr<MemoryRegion>* region) {
  uintptr_t start = reinterpret_cast<uintptr_t>(addr);
  if (start + length < start || start + length + PageSize() < start + length) {
    SIM_LOG_ERROR("ibv_reg_mr: [%p, +%zu) wraps around the address space: Bad address", addr,
                  length);
    return Status::kProvider;
  }
  if (!IsMapped(start, length)) {
    SIM_LOG_ERROR("ibv_reg_mr: [%p, +%zu) is not mapped memory: Bad address", addr, length);
    return Status::kProvider;
  }
  if (!PagesPinnable(start, length, access)) {
    SIM_LOG_ERROR(
        "ibv_reg_mr: [%p, +%zu) has pages its access cannot pin (PROT_NONE, or "
        "read-only for a writable region): Bad address",
        addr, length);
    return Status::kProvider;
  }
  users_.fetch_add(1);
  *region =
      MemoryRegionTable::Get().Register(this, addr, length, access, registrations_.fetch_add(1) + 1,
                                        ShareForPeers(addr, length, access));
  DirectTarget::Registered(**region);
  return Status::kOk;
}

void ProtectionDomain::DeregisterMemory(const std::shared_ptr<MemoryRegion>& region) {
  DirectTarget::Deregister(region);  // and no peer's direct access lands after this
  region->shared_pages.reset();      // the pages become private again (if no region holds them)
  persistence_->ForgetRegion(region->rkey);
  users_.fetch_sub(1);
}

void ProtectionDomain::ArmForPowerFailure() {
  {
    WriterLock copies_wait(&MemoryRegionTable::Get().mutex());
    persistence_->Arm();
  }
  // Placements save what they cover from now on, which a peer's direct access cannot do:
  // it closes (and what it placed meanwhile counts as placed before arming).
  DirectTarget::RefreshAll();
}

void ArmAllForPowerFailure() {
  {
    WriterLock copies_wait(&MemoryRegionTable::Get().mutex());
    PersistenceDomain::ArmAll();
  }
  DirectTarget::RefreshAll();
}

void StopArmingNewForPowerFailure() { PersistenceDomain::StopArmingNew(); }

size_t ReportAllNotDurable() {
  DirectTarget::TakeAllPlacements();
  return PersistenceDomain::ReportAll();
}

void ProtectionDomain::StartCrashRecording() {
  {
    WriterLock copies_wait(&MemoryRegionTable::Get().mutex());
    persistence_->StartRecording(
        node_->id(), [](const void* address, uint64_t length, std::string* path, uint64_t* offset) {
          FileBacking backing;
          if (!FindFileBacking(address, length, 4096, &backing)) return false;
          *path = backing.path;
          *offset = backing.offset;
          return true;
        });
  }
  DirectTarget::RefreshAll();  // armed: a peer's direct access closes, as for a power failure
}

CrashJournal ProtectionDomain::StopCrashRecording() {
  WriterLock copies_wait(&MemoryRegionTable::Get().mutex());
  return persistence_->StopRecording();
}

Status ProtectionDomain::PowerFail(LossMode mode, uint64_t seed, const TornKeep* keep) {
  if (mode != LossMode::kNone && !persistence_->armed()) {
    SIM_LOG_ERROR(
        "power failure: the node was not armed before the writes "
        "(rpma_sim_power_failure_arm, or a power_failure rule); nothing done");
    return Status::kInvalid;
  }
  node_->Fail([this, mode, seed, keep] {
    // Its queue pairs are in error now: no new remote operation starts. Wait for any still
    // copying, then put bytes back, before the connections' losses are told.
    MemoryRegionTable::Get().WaitForCopies();
    persistence_->PowerFail(mode, seed, keep);
  });
  return Status::kOk;
}

Status ProtectionDomain::Deallocate() {
  int users = users_.load();
  if (users != 0) {
    SIM_LOG_ERROR(
        "ibv_dealloc_pd: %d objects still use the protection domain: Device or "
        "resource busy",
        users);
    return Status::kProvider;
  }
  return Status::kOk;
}

}  // namespace rpma_sim
