// fault.cc -- rpma_sim.h: fault-injection rules, their seed, and librpma's fault points from
// code (sim/fault/fault_plan.h, sim/fault/librpma_points.h).
#include <librpma.h>
#include <rpma_sim.h>

#include <string>

#include "api/status_map.h"
#include "sim/common/log.h"
#include "sim/fault/fault_plan.h"
#include "sim/fault/librpma_points.h"

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

int rpma_sim_fault_seed(uint64_t* seed) {
  if (seed == nullptr) return RPMA_E_INVAL;
  *seed = rpma_sim::FaultPlan::Get().seed();
  return 0;
}

int rpma_sim_fault_set_seed(uint64_t seed) {
  rpma_sim::FaultPlan::Get().set_seed(seed);
  return 0;
}

int rpma_sim_fault_point_set(int64_t n) {
  if (n < 0) return RPMA_E_INVAL;
  rpma_sim::SetLibrpmaFaultTarget(n);
  return 0;
}

int rpma_sim_fault_point_passed(int64_t* passed) {
  if (passed == nullptr) return RPMA_E_INVAL;
  *passed = rpma_sim::LibrpmaFaultPointsPassed();
  return 0;
}
