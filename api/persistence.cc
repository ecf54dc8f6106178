// persistence.cc -- rpma_sim.h: the persistence model from code: arming a peer, its power
// failure, the target CPU's own persists, and the report (sim/pmem/persistence_domain.h).
#include <librpma.h>
#include <rpma_sim.h>

#include <memory>
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
  // The part of [addr, addr + len) in each region it meets, taken under the table's lock;
  // each is then a crash point of its region's node, in turn.
  struct Part {
    std::weak_ptr<const rpma_sim::ProtectionDomain> node;
    rpma_sim::PlacedRegion region;
    uint64_t offset;
    uint64_t length;
  };
  std::vector<Part> parts;
  rpma_sim::MemoryRegionTable::Get().ForEachOverlapping(
      addr, len, [begin, len, &parts](const rpma_sim::MemoryRegion& region) {
        const uint8_t* from = begin > region.addr ? begin : region.addr;
        const uint8_t* end = begin + len;
        const uint8_t* to = end < region.addr + region.length ? end : region.addr + region.length;
        parts.push_back(
            Part{region.pd->weak_from_this(),
                 rpma_sim::PlacedRegion{region.rkey, region.addr, region.length, region.ordinal},
                 static_cast<uint64_t>(from - region.addr), static_cast<uint64_t>(to - from)});
      });
  for (const Part& part : parts) {
    // Its power failing is the node's, not the region's: a region does not change its node.
    std::shared_ptr<rpma_sim::ProtectionDomain> node =
        std::const_pointer_cast<rpma_sim::ProtectionDomain>(part.node.lock());
    if (!node) continue;  // gone meanwhile, and its persistence with it
    // A power_failure rule at this point fires first, instead of the persist (not under the
    // table's lock: the failure waits for copies to end).
    if (rpma_sim::FaultPlan::Get().PowerFailureBeforePersist(node.get())) return 0;
    node->persistence().Persist(part.region, part.offset, part.length);
  }
  return 0;
}

int rpma_sim_persistence_report(void) { return static_cast<int>(rpma_sim::ReportAllNotDurable()); }
