// protection_domain.cc -- allocation bookkeeping of a protection domain.
#include "sim/verbs/protection_domain.h"

#include "sim/common/log.h"

namespace rpma_sim {

ProtectionDomain::ProtectionDomain(Device* device) : device_(device), caps_(GetDeviceCaps()) {}

std::shared_ptr<MemoryRegion> ProtectionDomain::RegisterMemory(void* addr, size_t length,
                                                               int access) {
  users_.fetch_add(1);
  return MemoryRegionTable::Get().Register(addr, length, access);
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
