// one_sided.cc -- executing a write, read, atomic write or flush on a target's memory, and
// the target and initiator of this process.
#include "sim/verbs/one_sided.h"

#include "sim/verbs/protection_domain.h"

namespace rpma_sim {
namespace {

// How `request` places bytes at its responder.
PlacedBy PlacedByOf(const SendRequest& request) {
  switch (request.opcode) {
    case SendOpcode::kAtomicWrite:
      return PlacedBy::kAtomicWrite;
    case SendOpcode::kSend:
      return request.with_imm ? PlacedBy::kSendWithImm : PlacedBy::kSend;
    default:
      return request.with_imm ? PlacedBy::kWriteWithImm : PlacedBy::kWrite;
  }
}

PlacedRegion Placed(const MemoryRegion& region) {
  return PlacedRegion{region.rkey, region.addr, region.length, region.ordinal};
}

}  // namespace

bool RunsWithoutResponder(const SendRequest& request, AtomicWrites atomics) {
  switch (request.opcode) {
    case SendOpcode::kWrite:
    case SendOpcode::kRead:
      return !request.with_imm && request.length > 0 && request.local != nullptr;
    case SendOpcode::kAtomicWrite:
      return atomics == AtomicWrites::kAligned;
    default:
      return false;
  }
}

void RegisteredMemory::NotePlacement(uint64_t address, uint64_t length, const SendRequest& request,
                                     uint64_t sequence) {
  NotePlaced(pd_, qp_num_, *found_, address - reinterpret_cast<uint64_t>(found_->addr), length,
             request, sequence);
}

void RegisteredMemory::NotePlaced(const ProtectionDomain* pd, uint32_t qp_num,
                                  const MemoryRegion& region, uint64_t offset, uint64_t length,
                                  const SendRequest& request, uint64_t sequence) {
  uint64_t ordinal = sequence + 1;
  pd->persistence().Place(Placed(region), offset, length,
                          Placement{qp_num, ordinal, ordinal, PlacedByOf(request)});
}

void RegisteredMemory::Flush(const SendRequest& request, uint64_t sequence) {
  pd_->persistence().Flush(Placed(*found_),
                           request.remote_addr - reinterpret_cast<uint64_t>(found_->addr),
                           request.length, request.flush_kind, qp_num_, sequence + 1);
}

ibv_wc_status LocalBuffer::CopyTo(uint8_t* target, size_t length) {
  uint8_t* local = LocalBytes();
  if (local == nullptr) return IBV_WC_LOC_PROT_ERR;
  return StatusOfPlacing(GuardedCopy(target, local, length));
}

ibv_wc_status LocalBuffer::CopyFrom(const uint8_t* source, size_t length,
                                    std::vector<uint8_t>* carried) {
  uint8_t* local = LocalBytes();
  if (local == nullptr) return IBV_WC_LOC_PROT_ERR;
  return StatusOfFetching(GuardedCopy(local, source, length));
}

uint8_t* LocalBuffer::LocalBytes() {
  if (!MemoryRegionTable::Get().IsRegisteredLocked(*region_)) return nullptr;
  return region_->addr + offset_;
}

uint8_t* RegisteredLocalBytes(const SendRequest& request) {
  if (!request.local || !MemoryRegionTable::Get().IsRegisteredLocked(*request.local))
    return nullptr;
  return request.local->addr + request.local_offset;
}

}  // namespace rpma_sim
