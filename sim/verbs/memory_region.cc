// memory_region.cc -- key assignment and bounds arithmetic for registered memory.
#include "sim/verbs/memory_region.h"

#include <mutex>

#include "sim/common/per_process.h"

namespace rpma_sim {

MemoryRegionTable& MemoryRegionTable::Get() {
  static PerProcess<MemoryRegionTable> table;  // a fork child's regions are its own
  return table.Get();
}

std::shared_ptr<MemoryRegion> MemoryRegionTable::Register(
    const ProtectionDomain* pd, void* addr, size_t length, int access, uint32_t ordinal,
    std::unique_ptr<SharedPages> shared_pages) {
  auto region = std::make_shared<MemoryRegion>();
  region->pd = pd;
  region->ordinal = ordinal;
  region->addr = static_cast<uint8_t*>(addr);
  region->length = length;
  region->access = access;
  region->shared_pages = std::move(shared_pages);
  WriterLock lock(&mutex_);
  // Keys look like hardware keys: an index in the high bits and a variant in the low byte.
  uint32_t key = next_key_;
  next_key_ += 0x100;
  region->lkey = key | 0x11;
  region->rkey = key | 0x22;
  region->registered_in.table.store(this, std::memory_order_relaxed);  // before it is found
  regions_[region->rkey] = region;
  return region;
}

const MemoryRegion* MemoryRegionTable::FindLocked(uint32_t rkey) const {
  auto it = regions_.find(rkey);
  return it == regions_.end() ? nullptr : it->second.get();
}

void MemoryRegionTable::Deregister(const std::shared_ptr<MemoryRegion>& region) {
  WriterLock lock(&mutex_);
  auto it = regions_.find(region->rkey);
  if (it == regions_.end() || it->second != region) return;  // not this table's
  region->registered_in.table.store(nullptr, std::memory_order_release);
  regions_.erase(it);
}

}  // namespace rpma_sim
