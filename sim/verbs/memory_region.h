// memory_region.h -- registered memory and the process-wide table the responder checks.
//
// A region is identified remotely by {virtual address, rkey}, exactly as a descriptor
// carries it. The responder (verbs/responder) looks a region up by rkey, checks bounds and
// access rights, and copies while holding the table's shared lock, so a region deregistered
// concurrently is never touched after rpma_mr_dereg returns.
#ifndef RPMA_SIM_VERBS_MEMORY_REGION_H_
#define RPMA_SIM_VERBS_MEMORY_REGION_H_

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "sim/common/mutex.h"
#include "sim/common/ranges.h"
#include "sim/transport/shared_pages.h"

namespace rpma_sim {

template <typename T>
class PerProcess;

class MemoryRegionTable;
class ProtectionDomain;

struct MemoryRegion {
  const ProtectionDomain* pd = nullptr;  // only queue pairs of the same domain may use it
  uint8_t* addr = nullptr;
  size_t length = 0;
  int access = 0;  // IBV_ACCESS_* flags
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  // Its place among its domain's registrations (1-based): the same in every run of a
  // program that registers in the same order, unlike its keys (a power failure's `keep`).
  uint32_t ordinal = 0;
  // The moved pages it holds (shared_pages.h): its whole pages, moved into a shared mapping
  // for peers on this host, and moved pages of other regions it touches; or null. Set
  // before the region is in the table; dropped by its deregistration.
  std::shared_ptr<SharedPages> shared_pages;
  // The table it is registered in, while it is (null after its deregistration); written
  // under that table's lock held exclusively. In a fork child it names the parent's table,
  // so the child's (IsRegisteredLocked) does not count it. A copy of the region is not
  // registered anywhere.
  struct RegisteredIn {
    RegisteredIn() = default;
    RegisteredIn(const RegisteredIn&) {}
    RegisteredIn& operator=(const RegisteredIn&) {
      table.store(nullptr, std::memory_order_relaxed);
      return *this;
    }
    std::atomic<const MemoryRegionTable*> table{nullptr};
  } registered_in;

  // True if [address, address + len) lies inside the region (overflow-safe).
  bool Contains(uint64_t address, uint64_t len) const {
    return RangeWithin(reinterpret_cast<uint64_t>(addr), length, address, len);
  }
  // True if [offset, offset + len) lies inside the region (overflow-safe).
  bool ContainsOffset(uint64_t offset, uint64_t len) const {
    return OffsetRangeWithin(length, offset, len);
  }
};

// Maps rkeys to the regions registered in this process.
class MemoryRegionTable {
 public:
  static MemoryRegionTable& Get();

  // Registers [addr, addr + length) with `access` as its domain's `ordinal`th region (its
  // pages moved into `shared_pages`, if they were); assigns fresh keys.
  std::shared_ptr<MemoryRegion> Register(const ProtectionDomain* pd, void* addr, size_t length,
                                         int access, uint32_t ordinal = 0,
                                         std::unique_ptr<SharedPages> shared_pages = nullptr);

  // Removes the region; waits for any operation currently copying to or from it.
  void Deregister(const std::shared_ptr<MemoryRegion>& region);

  // The table's lock. Held shared (ReaderLock): regions found meanwhile stay registered
  // (Deregister waits). Held exclusively (WriterLock): no operation copies to or from any
  // region meanwhile.
  SharedMutex& mutex() const RETURN_CAPABILITY(mutex_) { return mutex_; }
  // Returns once no operation that found a region before this call is still copying.
  void WaitForCopies() EXCLUDES(mutex_) { WriterLock wait(&mutex_); }

  // Calls `visit` for each registered region overlapping [addr, addr + length).
  template <typename Visit>
  void ForEachOverlapping(const void* addr, size_t length, Visit visit) {
    ReaderLock lock(&mutex_);
    uintptr_t begin = reinterpret_cast<uintptr_t>(addr);
    uintptr_t end = begin + length < begin ? UINTPTR_MAX : begin + length;
    for (const auto& entry : regions_) {
      uintptr_t start = reinterpret_cast<uintptr_t>(entry.second->addr);
      if (start < end && begin < start + entry.second->length) visit(*entry.second);
    }
  }

  // Calls `visit` for each region registered in `pd`. Takes the table shared.
  template <typename Visit>
  void ForEachOf(const ProtectionDomain* pd, Visit visit) {
    ReaderLock lock(&mutex_);
    for (const auto& entry : regions_)
      if (entry.second->pd == pd) visit(*entry.second);
  }

  // The region with `rkey`, or nullptr.
  const MemoryRegion* FindLocked(uint32_t rkey) const REQUIRES_SHARED(mutex_);

  // True if `region` is still registered in this table: no lookup. Under the lock held
  // shared it stays so while the lock is held.
  bool IsRegisteredLocked(const MemoryRegion& region) const REQUIRES_SHARED(mutex_) {
    return IsRegistered(region);
  }
  // The same without the lock: it was registered at some moment of the call (a check that
  // needs no copy to follow, such as a post's local checks).
  bool IsRegistered(const MemoryRegion& region) const {
    return region.registered_in.table.load(std::memory_order_acquire) == this;
  }

 private:
  friend class PerProcess<MemoryRegionTable>;
  MemoryRegionTable() = default;

  mutable SharedMutex mutex_;
  std::unordered_map<uint32_t, std::shared_ptr<MemoryRegion>> regions_ GUARDED_BY(mutex_);
  uint32_t next_key_ GUARDED_BY(mutex_) = 0x1000;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_MEMORY_REGION_H_
