// direct_target.cc -- publishing a domain's regions to a connection's peer, opening and
// closing direct access, and taking the peer's placement records.
#include "sim/verbs/direct_target.h"
#include "sim/common/mutex.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/fabric/io_service.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/stage_gate.h"

namespace rpma_sim {
namespace {

// How long a close or a deregistration waits for a peer's access under way. An access is one
// process_vm copy of at most a region; a peer that holds one longer is stuck or lying, and
// the close goes on (the same bound as ShmSegment::RevokeReferences).
constexpr std::chrono::milliseconds kIdleTimeout{1000};
// How long a close waits for it on the caller's thread, and then between two looks on the
// engine's timer.
constexpr std::chrono::milliseconds kCloseWait{1};

// Every DirectTarget of the process that is not closed, and the file each registered region
// maps (if it maps one), found once.
struct Directory {
  Mutex mutex;
  std::vector<std::weak_ptr<DirectTarget>> targets GUARDED_BY(mutex);
  std::unordered_map<uint32_t, std::shared_ptr<const FileBacking>> files GUARDED_BY(mutex);
};

// The longest path a DirectArea entry holds.
constexpr size_t kMaxPath = sizeof(DirectRegion::path);

// The file that maps [addr, addr + length) as one range, or null (anonymous or private
// memory). Reads /proc/self/maps.
std::shared_ptr<const FileBacking> FindMappedFile(const uint8_t* addr, uint64_t length) {
  auto file = std::make_shared<FileBacking>();
  if (!FindFileBacking(addr, length, kMaxPath, file.get())) return nullptr;
  return file;
}

// The file `region` maps (the region file its pages moved into, if they did), or null (anonymous
// or private memory). Reads /proc/self/maps unless its pages moved.
std::shared_ptr<const FileBacking> FindFile(const MemoryRegion& region) {
  if (region.shared_pages == nullptr) return FindMappedFile(region.addr, region.length);
  auto file = std::make_shared<FileBacking>();
  return region.shared_pages->BackingOf(region.addr, region.length, file.get()) ? file : nullptr;
}

// A file found for a region's range before the directory's lock was taken.
struct FoundFile {
  const uint8_t* addr;
  uint64_t length;
  std::shared_ptr<const FileBacking> file;
};
using FoundFiles = std::unordered_map<uint32_t, FoundFile>;

// The files of `pd`'s regions that the directory's cache lacks and only /proc/self/maps can
// tell (their pages did not move), found with no lock held: a server that registered its
// memory before its first client must not read /proc/self/maps under the locks of Start.
FoundFiles FindUncachedFiles(const ProtectionDomain* pd);

// The file of a region registered before, from the directory's cache, or `found` (else
// found now: a region registered since FindUncachedFiles, whose pages mostly moved).
const FileBacking* CachedFileLocked(Directory& directory, const MemoryRegion& region,
                                    const FoundFiles& found) REQUIRES(directory.mutex) {
  auto it = directory.files.find(region.rkey);
  if (it == directory.files.end()) {
    auto early = found.find(region.rkey);
    const bool same = early != found.end() && early->second.addr == region.addr &&
                      early->second.length == region.length;
    it = directory.files.emplace(region.rkey, same ? early->second.file : FindFile(region)).first;
  }
  return it->second.get();
}

Directory& TheDirectory() {
  static PerProcess<Directory> directory;  // a fork child's targets are its own
  return directory.Get();
}

// Drops the entries of targets gone: the list holds the live ones and those gone since the
// last start or walk (a server that serves client after client keeps no entry per client).
void PruneLocked(Directory& directory) REQUIRES(directory.mutex) {
  directory.targets.erase(
      std::remove_if(directory.targets.begin(), directory.targets.end(),
                     [](const std::weak_ptr<DirectTarget>& weak) { return weak.expired(); }),
      directory.targets.end());
}

// The live targets, pruning those gone; taken under the directory's lock so that callers
// act on them without it (their work waits).
std::vector<std::shared_ptr<DirectTarget>> LiveTargets() {
  Directory& directory = TheDirectory();
  MutexLock lock(&directory.mutex);
  PruneLocked(directory);
  std::vector<std::shared_ptr<DirectTarget>> live;
  live.reserve(directory.targets.size());
  for (const std::weak_ptr<DirectTarget>& weak : directory.targets)
    if (std::shared_ptr<DirectTarget> target = weak.lock()) live.push_back(std::move(target));
  return live;
}

uint32_t Access(const MemoryRegion& region) { return static_cast<uint32_t>(region.access); }

// Whether the peer may ever move bytes in or out of `region` itself: only a remote write
// or read goes direct (direct_request.cc). A region only this side uses is not published,
// which spares a connect the page faults of its entry (a client's source buffer).
bool ReachableDirectly(const MemoryRegion& region) {
  return (region.access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)) != 0;
}

FoundFiles FindUncachedFiles(const ProtectionDomain* pd) {
  std::vector<std::pair<uint32_t, FoundFile>> wanted;
  {
    Directory& directory = TheDirectory();
    MutexLock lock(&directory.mutex);
    MemoryRegionTable::Get().ForEachOf(pd, [&](const MemoryRegion& region) {
      directory.mutex.AssertHeld();  // ForEachOf calls back within `lock`
      if (ReachableDirectly(region) && region.shared_pages == nullptr &&
          directory.files.count(region.rkey) == 0)
        wanted.push_back({region.rkey, FoundFile{region.addr, region.length, nullptr}});
    });
  }
  FoundFiles found;
  for (auto& [rkey, range] : wanted) {
    range.file = FindMappedFile(range.addr, range.length);
    found.emplace(rkey, std::move(range));
  }
  return found;
}

}  // namespace

DirectTarget::DirectTarget(std::shared_ptr<ShmSegment> segment, ProtectionDomain* pd,
                           uint32_t qp_num)
    : segment_(std::move(segment)), area_(segment_->own_direct()), pd_(pd), qp_num_(qp_num) {}

DirectTarget::~DirectTarget() {
  // Never closed (a timer that waits keeps the target until it finished): the wait is this
  // thread's.
  if (!BeginClose()) return;
  WaitIdle();
  FinishClose();
}

std::shared_ptr<DirectTarget> DirectTarget::Start(std::shared_ptr<ShmSegment> segment,
                                                  ProtectionDomain* pd, uint32_t qp_num) {
  std::shared_ptr<DirectTarget> target(new DirectTarget(std::move(segment), pd, qp_num));
  const FoundFiles found = FindUncachedFiles(pd);
  Directory& directory = TheDirectory();
  // Under the directory's lock: a region registered meanwhile is published by the scan
  // below or by Registered (Publish is idempotent), never by neither.
  MutexLock lock(&directory.mutex);
  PruneLocked(directory);
  directory.targets.push_back(target);
  MutexLock target_lock(&target->mutex_);
  MemoryRegionTable::Get().ForEachOf(pd, [&](const MemoryRegion& region) {
    directory.mutex.AssertHeld();  // ForEachOf calls back within `lock`
    if (!ReachableDirectly(region)) return;
    target->area_.Publish(region.rkey, reinterpret_cast<uintptr_t>(region.addr), region.length,
                          Access(region), CachedFileLocked(directory, region, found));
  });
  return target;
}

void DirectTarget::SetConnected() {
  {
    MutexLock lock(&mutex_);
    connected_ = true;
  }
  Refresh();
}

void DirectTarget::Refresh() {
  // No wait for accesses under way: one that began before a gate or an arming counts as
  // executed before it (its placement is taken with the next request, before that executes).
  MutexLock lock(&mutex_);
  bool open =
      connected_ && !closed_ && !g_stage_gate_slot.installed() && !pd_->persistence().armed();
  StoreOpenLocked(open);
}

void DirectTarget::StoreOpenLocked(bool open) {
  area_.open.store(gave_up_ ? DirectArea::kGaveUp : open ? DirectArea::kOpen : DirectArea::kClosed);
}

void DirectTarget::Close() {
  if (!BeginClose()) return;
  // An honest peer's access ends within microseconds. Its placement is recorded before its
  // bytes move, so what it places is taken here either way, before the connection's report.
  const bool idle = IdleWithin(kCloseWait);
  FinishClose();
  if (!idle)
    GiveUpUnlessIdleBy(shared_from_this(),
                       std::chrono::steady_clock::now() + kIdleTimeout - kCloseWait);
}

bool DirectTarget::BeginClose() {
  MutexLock lock(&mutex_);
  if (closed_) return false;
  closed_ = true;  // a Refresh meanwhile does not open it again
  StoreOpenLocked(false);
  return true;
}

void DirectTarget::FinishClose() {
  TakePlacements();  // the last ones: the connection's report comes next
  MutexLock lock(&mutex_);
  finished_ = true;
}

void DirectTarget::GiveUpUnlessIdleBy(std::shared_ptr<DirectTarget> target,
                                      std::chrono::steady_clock::time_point deadline) {
  RunAt(std::chrono::steady_clock::now() + kCloseWait,
        [target = std::move(target), deadline]() mutable {
          if (target->IdleWithin(std::chrono::milliseconds(0))) return;
          if (std::chrono::steady_clock::now() < deadline)
            return GiveUpUnlessIdleBy(std::move(target), deadline);
          target->GiveUp();
        });
}

void DirectTarget::WaitIdle() {
  if (!IdleWithin(kIdleTimeout)) GiveUp();
}

bool DirectTarget::IdleWithin(std::chrono::milliseconds timeout) {
  {
    // Given up on once, for good: what the peer moves from then on does not count
    // (DirectArea::TargetGaveUp), so there is nothing to wait for; a peer that keeps its
    // access claimed for ever must not make every later deregistration wait again.
    MutexLock lock(&mutex_);
    if (gave_up_) return true;
  }
  return area_.WaitIdle(timeout, segment_->peer_pid());
}

void DirectTarget::GiveUp() {
  {
    // The late access must not count as done (DirectArea::kGaveUp), and none comes after it.
    MutexLock lock(&mutex_);
    if (gave_up_) return;  // a close's timer and a deregistration may both give up: once
    gave_up_ = true;
    StoreOpenLocked(false);
  }
  SIM_LOG_ERROR(
      "the peer of queue pair %u held a direct access for over %lld ms; going on without "
      "it (that access fails, and the connection's requests go the usual way from now on)",
      qp_num_, static_cast<long long>(kIdleTimeout.count()));
}

void DirectTarget::TakePlacements(const MemoryRegion* going) {
  // Every request the peer sends comes here first: with nothing to take, no lock and no
  // std::function (its captures do not fit its inline buffer: an allocation).
  if (!area_.HasUnreadPlacements()) return;
  MutexLock lock(&mutex_);
  if (!connected_ || finished_) return;
  ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
  PersistenceDomain& persistence = pd_->persistence();
  // The clock is read only once yields were spent: a second after the first was, all are
  // back.
  if (placement_yields_ < kPlacementYields &&
      std::chrono::steady_clock::now() - placement_yields_since_ >= std::chrono::seconds(1))
    placement_yields_ = kPlacementYields;
  const bool unspent = placement_yields_ == kPlacementYields;
  bool believable = area_.ReadPlacements(
      [&](uint32_t rkey, uint64_t offset, uint64_t length, uint64_t first, uint64_t last) {
        // Checked like a request: a record the peer made up places nothing.
        MemoryRegionTable::Get()
            .mutex()
            .AssertReaderHeld();  // ReadPlacements calls back within table_lock
        const MemoryRegion* region = MemoryRegionTable::Get().FindLocked(rkey);
        if (region == nullptr && going != nullptr && going->rkey == rkey) region = going;
        if (region == nullptr || region->pd != pd_ || !region->ContainsOffset(offset, length))
          return;
        persistence.Place(PlacedRegion{region->rkey, region->addr, region->length, region->ordinal},
                          offset, length, Placement{qp_num_, first, last, PlacedBy::kWrite});
      },
      &placement_yields_);
  if (unspent && placement_yields_ < kPlacementYields)
    placement_yields_since_ = std::chrono::steady_clock::now();
  if (!believable)
    SIM_LOG_ERROR(
        "the peer of queue pair %u wrote impossible placement counters; its direct "
        "access stays closed",
        qp_num_);
  if (!believable) StoreOpenLocked(false);
}

void DirectTarget::Registered(const MemoryRegion& region) {
  if (!ReachableDirectly(region)) return;
  std::shared_ptr<const FileBacking> file;
  bool found = false;
  for (const std::shared_ptr<DirectTarget>& target : LiveTargets()) {
    if (target->pd_ != region.pd) continue;
    if (!found) {  // only for a region some connection publishes; outside every lock
      file = FindFile(region);
      found = true;
      Directory& directory = TheDirectory();
      MutexLock lock(&directory.mutex);
      directory.files[region.rkey] = file;
    }
    MutexLock lock(&target->mutex_);
    if (!target->closed_)
      target->area_.Publish(region.rkey, reinterpret_cast<uintptr_t>(region.addr), region.length,
                            Access(region), file.get());
  }
}

void DirectTarget::Deregister(const std::shared_ptr<MemoryRegion>& region) {
  std::vector<std::shared_ptr<DirectTarget>> withdrawn;
  {
    // Under the directory's lock, with the region's removal from the table: a target that
    // starts meanwhile either is withdrawn from here or does not find the region.
    Directory& directory = TheDirectory();
    MutexLock lock(&directory.mutex);
    directory.files.erase(region->rkey);
    for (const std::weak_ptr<DirectTarget>& weak : directory.targets) {
      std::shared_ptr<DirectTarget> target = weak.lock();
      if (!target || target->pd_ != region->pd) continue;
      MutexLock target_lock(&target->mutex_);
      if (target->area_.Withdraw(region->rkey)) withdrawn.push_back(std::move(target));
    }
    MemoryRegionTable::Get().Deregister(region);
  }
  for (const std::shared_ptr<DirectTarget>& target : withdrawn) {
    target->WaitIdle();
    target->TakePlacements(region.get());  // before the domain forgets the region's ranges
  }
}

void DirectTarget::RefreshAll() {
  for (const std::shared_ptr<DirectTarget>& target : LiveTargets()) target->Refresh();
}

void DirectTarget::TakeAllPlacements() {
  for (const std::shared_ptr<DirectTarget>& target : LiveTargets()) target->TakePlacements();
}

}  // namespace rpma_sim
