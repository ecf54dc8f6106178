// persistence.cc -- rpma_sim.h: the persistence model from code: arming a peer, its power
// failure, the target CPU's own persists, and the report (sim/pmem/persistence_domain.h).
#include <librpma.h>
#include <rpma_sim.h>

#include <algorithm>
#include <vector>

#include "api/inherited.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/fault/fault_plan.h"
#include "sim/verbs/memory_region.h"

int rpma_sim_power_failure_arm(struct rpma_peer* peer) {
  if (peer == nullptr) return RPMA_E_INVAL;
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  peer->pd->ArmForPowerFailure();
  return 0;
}

int rpma_sim_power_failure(struct rpma_peer* peer, enum rpma_sim_loss mode) {
  if (peer == nullptr) return RPMA_E_INVAL;
  rpma_sim::LossMode loss;
  switch (mode) {
    case RPMA_SIM_LOSS_ALL:
      loss = rpma_sim::LossMode::kAll;
      break;
    case RPMA_SIM_LOSS_WORDS:
      loss = rpma_sim::LossMode::kWords;
      break;
    case RPMA_SIM_LOSS_LINES:
      loss = rpma_sim::LossMode::kLines;
      break;
    case RPMA_SIM_LOSS_NONE:
      loss = rpma_sim::LossMode::kNone;
      break;
    default:
      return RPMA_E_INVAL;
  }
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  return ToRpmaError(peer->pd->PowerFail(loss, rpma_sim::FaultPlan::Get().seed()));
}

int rpma_sim_persist(const void* addr, size_t len) {
  if (addr == nullptr || len == 0) return RPMA_E_INVAL;
  const uint8_t* begin = static_cast<const uint8_t*>(addr);
  // A persist is a crash point of each node whose memory it names: a power_failure rule at
  // that point fires first (after the table's lock: the failure waits for copies to end).
  std::vector<const rpma_sim::ProtectionDomain*> nodes;
  rpma_sim::MemoryRegionTable::Get().ForEachOverlapping(
      addr, len, [&nodes](const rpma_sim::MemoryRegion& region) {
        if (std::find(nodes.begin(), nodes.end(), region.pd) == nodes.end())
          nodes.push_back(region.pd);
      });
  for (const rpma_sim::ProtectionDomain* pd : nodes) {
    // The node's, as the region's registration holds it (const there: a region does not
    // change its domain); its power failing is the node's, not the region's.
    if (rpma_sim::FaultPlan::Get().PowerFailureBeforePersist(
            const_cast<rpma_sim::ProtectionDomain*>(pd)))
      return 0;
  }
  rpma_sim::MemoryRegionTable::Get().ForEachOverlapping(
      addr, len, [begin, len](const rpma_sim::MemoryRegion& region) {
        // The part of [addr, addr + len) inside the region, as offsets in it.
        const uint8_t* from = begin > region.addr ? begin : region.addr;
        const uint8_t* end = begin + len;
        const uint8_t* to = end < region.addr + region.length ? end : region.addr + region.length;
        region.pd->persistence().Persist(
            rpma_sim::PlacedRegion{region.rkey, region.addr, region.length, region.ordinal},
            static_cast<uint64_t>(from - region.addr), static_cast<uint64_t>(to - from));
      });
  return 0;
}

int rpma_sim_persistence_report(void) { return static_cast<int>(rpma_sim::ReportAllNotDurable()); }
