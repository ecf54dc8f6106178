// protection_domain.cc -- allocation bookkeeping of a protection domain.
#include "sim/verbs/protection_domain.h"

#include <sys/mman.h>
#include <unistd.h>

#include "sim/common/log.h"

namespace rpma_sim {

ProtectionDomain::ProtectionDomain(Device* device) : device_(device), caps_(GetDeviceCaps()) {}

Status ProtectionDomain::RegisterMemory(void* addr, size_t length, int access,
                                        std::shared_ptr<MemoryRegion>* region) {
  uintptr_t start = reinterpret_cast<uintptr_t>(addr);
  uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t first = start & ~(page - 1);
  if (start + length < start || start + length + page < start + length) {
    SIM_LOG_ERROR("ibv_reg_mr: [%p, +%zu) wraps around the address space: Bad address", addr,
                  length);
    return Status::kProvider;
  }
  uintptr_t end = (start + length + page - 1) & ~(page - 1);
  // msync fails with ENOMEM when part of the range is not mapped: the pages cannot be pinned.
  if (msync(reinterpret_cast<void*>(first), end - first, MS_ASYNC) != 0) {
    SIM_LOG_ERROR("ibv_reg_mr: [%p, +%zu) is not mapped memory: Bad address", addr, length);
    return Status::kProvider;
  }
  users_.fetch_add(1);
  *region = MemoryRegionTable::Get().Register(this, addr, length, access);
  return Status::kOk;
}

void ProtectionDomain::DeregisterMemory(const std::shared_ptr<MemoryRegion>& region) {
  MemoryRegionTable::Get().Deregister(region);
  users_.fetch_sub(1);
}

Status ProtectionDomain::Deallocate() {
  int users = users_.load();
  if (users != 0) {
    SIM_LOG_ERROR("ibv_dealloc_pd: %d objects still use the protection domain: Device or "
                  "resource busy", users);
    return Status::kProvider;
  }
  return Status::kOk;
}

}  // namespace rpma_sim
