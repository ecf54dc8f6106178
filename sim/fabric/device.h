// device.h -- the simulated RDMA device behind every struct ibv_context we hand out.
//
// One device per process, like a host with one RNIC. It embeds a real struct ibv_context
// (and ibv_device with a name) so code that inspects the context sees plausible values;
// librpma users only pass the pointer around. The device is never freed, as a verbs context
// opened by rdma_cm is never closed by librpma.
#ifndef RPMA_SIM_FABRIC_DEVICE_H_
#define RPMA_SIM_FABRIC_DEVICE_H_

#include <infiniband/verbs.h>

#include "sim/common/status.h"
#include "sim/fabric/address.h"

namespace rpma_sim {

// The simulated device's limits (ibv_query_device), those of a common ConnectX adapter.
// Asking for more makes the create call fail, as EINVAL from verbs (RPMA_E_PROVIDER).
constexpr uint32_t kMaxCompletionQueueEntries = 4194303;        // max_cqe
constexpr uint32_t kMaxQueuePairWorkRequests = 32768;           // max_qp_wr
constexpr uint32_t kMaxSharedReceiveQueueWorkRequests = 32767;  // max_srq_wr

class Device {
 public:
  // The process's device.
  static Device* Get();

  // The device behind `context`, or nullptr if `context` is not one of ours.
  static Device* FromContext(const ibv_context* context);

  // Finds the device serving `addr`: to listen on it (a local lookup) the host must own the
  // address, to connect to it (a remote one) it only has to resolve. Returns kProvider
  // otherwise.
  static Status ForAddress(const char* addr, AddressUse use, Device** device);

  ibv_context* context() { return &context_; }
  const char* name() const { return device_.name; }

  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

 private:
  Device();

  ibv_device device_{};
  ibv_context context_{};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_FABRIC_DEVICE_H_
