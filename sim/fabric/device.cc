// device.cc -- the per-process simulated device and address-to-device lookup.
#include "sim/fabric/device.h"

#include <string.h>

#include "sim/common/log.h"
#include "sim/fabric/address.h"

namespace rpma_sim {

Device::Device() {
  strncpy(device_.name, "rpma_sim0", sizeof(device_.name) - 1);
  strncpy(device_.dev_name, "uverbs_sim0", sizeof(device_.dev_name) - 1);
  device_.node_type = IBV_NODE_CA;
  device_.transport_type = IBV_TRANSPORT_IB;
  context_.device = &device_;
  context_.cmd_fd = -1;
  context_.async_fd = -1;
  context_.num_comp_vectors = 1;
}

Device* Device::Get() {
  static Device* device = new Device();
  return device;
}

Device* Device::FromContext(const ibv_context* context) {
  Device* device = Get();
  return context == &device->context_ ? device : nullptr;
}

Status Device::ForAddress(const char* addr, AddressUse use, Device** device) {
  SocketAddress address;
  Status status = ResolveAddress(addr, nullptr, use, &address);
  if (status != Status::kOk) return status;
  if (use == AddressUse::kListen && !HostOwnsAddress(address)) {
    SIM_LOG_ERROR("%s is not an address of this host: No such device", addr);
    return Status::kProvider;
  }
  *device = Get();
  return Status::kOk;
}

}  // namespace rpma_sim
