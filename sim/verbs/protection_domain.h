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
#include "sim/verbs/memory_region.h"

namespace rpma_sim {

class Device;

class ProtectionDomain {
 public:
  // Captures the device's capabilities at allocation, as rpma_peer_new queries them.
  explicit ProtectionDomain(Device* device);

  Device* device() const { return device_; }
  // The fabric node this domain (the peer) is: each domain its own.
  const std::shared_ptr<Node>& node() const { return node_; }
  const DeviceCaps& caps() const { return caps_; }

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
  std::atomic<int> users_{0};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_PROTECTION_DOMAIN_H_
