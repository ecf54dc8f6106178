// utils.cc -- rpma_utils_*: device lookup by address, ODP capability, and the string tables
// (rpma_utils_conn_event_2str, rpma_err_2str).
#include <librpma.h>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/librpma_points.h"
#include "api/status_map.h"
#include "sim/fabric/config.h"
#include "sim/fabric/device.h"
#include "sim/fault/fault_plan.h"

int rpma_utils_get_ibv_context(const char* addr, enum rpma_util_ibv_context_type type,
                               struct ibv_context** ibv_ctx_ptr) {
  rpma_sim::FaultPlan::Get().LoadEnvironmentOnce();  // usually the first call: rules apply
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_utils_get_ibv_context");
  if (addr == nullptr || ibv_ctx_ptr == nullptr) return RPMA_E_INVAL;
  if (type != RPMA_UTIL_IBV_CONTEXT_LOCAL && type != RPMA_UTIL_IBV_CONTEXT_REMOTE)
    return RPMA_E_INVAL;
  // Resolving the address: an info, a CM id, bound (local) or resolved (remote).
  int code = PointsInfoNew();
  if (code != 0) return code;
  bool local = type == RPMA_UTIL_IBV_CONTEXT_LOCAL;
  if (RPMA_FAULT_FIRES(RPMA_E_PROVIDER, "rpma_utils_get_ibv_context") ||
      RPMA_FAULT_FIRES(RPMA_E_PROVIDER, local ? "rpma_info_bind_addr" : "rpma_info_resolve_addr")) {
    PointsInfoDelete();
    return RPMA_E_PROVIDER;
  }
  rpma_sim::Device* device = nullptr;
  rpma_sim::Status status = rpma_sim::Device::ForAddress(addr,
                                                         type == RPMA_UTIL_IBV_CONTEXT_LOCAL
                                                             ? rpma_sim::AddressUse::kListen
                                                             : rpma_sim::AddressUse::kConnect,
                                                         &device);
  PointsInfoDelete();  // as librpma's, on every path once the info exists
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  *ibv_ctx_ptr = device->context();
  return 0;
}

int rpma_utils_ibv_context_is_odp_capable(struct ibv_context* ibv_ctx, int* is_odp_capable) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_utils_ibv_context_is_odp_capable");
  if (ibv_ctx == nullptr || is_odp_capable == nullptr) return RPMA_E_INVAL;
  *is_odp_capable = 0;  // as librpma, before the query: a failed one leaves 0
  // ibv_query_device_ex fails on a context that is not a device's.
  if (rpma_sim::Device::FromContext(ibv_ctx) == nullptr) return RPMA_E_PROVIDER;
  *is_odp_capable = rpma_sim::GetDeviceCaps().on_demand_paging ? 1 : 0;
  return 0;
}

const char* rpma_utils_conn_event_2str(enum rpma_conn_event conn_event) {
  switch (conn_event) {
    case RPMA_CONN_UNDEFINED:
      return "Undefined connection event";
    case RPMA_CONN_ESTABLISHED:
      return "Connection established";
    case RPMA_CONN_CLOSED:
      return "Connection closed";
    case RPMA_CONN_LOST:
      return "Connection lost";
    case RPMA_CONN_REJECTED:
      return "Connection rejected";
    case RPMA_CONN_UNREACHABLE:
      return "Connection unreachable";
  }
  return "Unsupported connection event";
}

const char* rpma_err_2str(int ret) {
  switch (ret) {
    case 0:
      return "Success";
    case RPMA_E_NOSUPP:
      return "Not supported";
    case RPMA_E_PROVIDER:
      return "Provider error occurred";
    case RPMA_E_NOMEM:
      return "Out of memory";
    case RPMA_E_INVAL:
      return "Invalid argument";
    case RPMA_E_NO_COMPLETION:
      return "No next completion available";
    case RPMA_E_NO_EVENT:
      return "No next event available";
    case RPMA_E_AGAIN:
      return "Temporary error, try again";
    case RPMA_E_SHARED_CHANNEL:
      return "Completion channel is shared";
    case RPMA_E_NOT_SHARED_CHNL:
      return "Completion channel is not shared";
    case RPMA_E_UNKNOWN:
    default:
      return "Unknown error";
  }
}
