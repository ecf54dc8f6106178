// fault.cc -- rpma_sim.h: fault-injection rules from code (sim/fault/fault_plan.h).
#include <librpma.h>
#include <rpma_sim.h>

#include <string>

#include "api/status_map.h"
#include "sim/common/log.h"
#include "sim/fault/fault_plan.h"

int rpma_sim_fault_add(const char* rule) {
  if (rule == nullptr) return RPMA_E_INVAL;
  std::string error;
  rpma_sim::Status status = rpma_sim::FaultPlan::Get().Add(rule, &error);
  if (status != rpma_sim::Status::kOk) SIM_LOG_ERROR("rpma_sim_fault_add: %s", error.c_str());
  return ToRpmaError(status);
}

int rpma_sim_fault_clear(void) {
  rpma_sim::FaultPlan::Get().Clear();
  return 0;
}

int rpma_sim_fault_count(uint64_t* fired) {
  if (fired == nullptr) return RPMA_E_INVAL;
  *fired = rpma_sim::FaultPlan::Get().fired();
  return 0;
}
