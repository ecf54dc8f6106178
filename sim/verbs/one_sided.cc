// one_sided.cc -- executing a write, read, atomic write or flush on a target's memory, and
// the target and initiator of this process.
#include "sim/verbs/one_sided.h"

#include <string.h>

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

// A write's bytes, from the initiator to the target range.
bool Place(TargetMemory& target, uint8_t* mapped, const SendRequest& request,
           InitiatorBuffer* initiator) REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
  if (initiator == nullptr) return false;
  if (mapped != nullptr) return initiator->CopyTo(mapped, request.length);
  const uint8_t* local = initiator->LocalBytes();
  return local != nullptr && target.WriteUnmapped(request.remote_addr, local, request.length);
}

// A read's bytes, from the target range to the initiator (or *read_data).
bool Fetch(TargetMemory& target, const uint8_t* mapped, const SendRequest& request,
           InitiatorBuffer* initiator, std::vector<uint8_t>* read_data)
    REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
  if (initiator == nullptr) return false;
  if (mapped != nullptr) return initiator->CopyFrom(mapped, request.length, read_data);
  uint8_t* local = initiator->LocalBytes();
  return local != nullptr && target.ReadUnmapped(request.remote_addr, local, request.length);
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

Outcome ExecuteOneSided(const SendRequest& request, uint64_t sequence, TargetMemory& target,
                        InitiatorBuffer* initiator, DeviceModel device,
                        std::vector<uint8_t>* read_data) {
  Outcome outcome;
  uint8_t* mapped = nullptr;
  switch (request.opcode) {
    case SendOpcode::kWrite:
      if (request.length == 0) break;  // a 0-byte write checks no key
      if (!target.Find(request, request.length, IBV_ACCESS_REMOTE_WRITE, &mapped)) {
        outcome.status = IBV_WC_REM_ACCESS_ERR;
        break;
      }
      target.NotePlacement(request.remote_addr, request.length, request, sequence);
      if (!Place(target, mapped, request, initiator))
        outcome.status = IBV_WC_LOC_PROT_ERR;  // the requester's buffer went away meanwhile
      break;
    case SendOpcode::kRead:
      if (request.length == 0) break;
      if (!target.Find(request, request.length, IBV_ACCESS_REMOTE_READ, &mapped)) {
        outcome.status = IBV_WC_REM_ACCESS_ERR;
        break;
      }
      if (!Fetch(target, mapped, request, initiator, read_data))
        outcome.status = IBV_WC_LOC_PROT_ERR;  // the requester's buffer went away meanwhile
      break;
    case SendOpcode::kAtomicWrite: {
      if (!target.Find(request, sizeof(uint64_t), IBV_ACCESS_REMOTE_WRITE, &mapped)) {
        outcome.status = IBV_WC_REM_ACCESS_ERR;
        break;
      }
      uint64_t value;
      memcpy(&value, request.inline_data, sizeof(value));
      uintptr_t where =
          mapped != nullptr ? reinterpret_cast<uintptr_t>(mapped) : request.remote_addr;
      bool aligned = where % sizeof(uint64_t) == 0;
      if (!aligned && device.native_atomic_write) {
        outcome.status = IBV_WC_REM_INV_REQ_ERR;  // native atomics need natural alignment
        break;
      }
      target.NotePlacement(request.remote_addr, sizeof(value), request, sequence);
      if (mapped == nullptr) {
        if (!target.WriteUnmapped(request.remote_addr, reinterpret_cast<uint8_t*>(&value),
                                  sizeof(value)))
          outcome.status = IBV_WC_REM_ACCESS_ERR;
      } else if (aligned) {
        __atomic_store_n(reinterpret_cast<uint64_t*>(mapped), value, __ATOMIC_SEQ_CST);
      } else {
        memcpy(mapped, &value, sizeof(value));  // the portable path is a plain 8-byte write
      }
      break;
    }
    case SendOpcode::kFlush: {
      // Portable path: an 8-byte read at the flushed address; native: the whole range.
      uint64_t length = device.native_flush ? request.length : sizeof(uint64_t);
      if (!target.Find(request, length, IBV_ACCESS_REMOTE_READ, &mapped)) {
        outcome.status = IBV_WC_REM_ACCESS_ERR;
        break;
      }
      // What the flush makes durable is the persistence model's to say (sim/pmem).
      target.Flush(request, sequence);
      break;
    }
    case SendOpcode::kSend:
      break;  // a message is no one-sided operation (responder.cc, ExecuteMessage)
  }
  return outcome;
}

bool RegisteredMemory::Find(const SendRequest& request, uint64_t length, int access,
                            uint8_t** mapped) {
  const MemoryRegion* region = MemoryRegionTable::Get().FindLocked(request.rkey);
  if (region == nullptr || region->pd != pd_ || (region->access & access) != access ||
      !region->Contains(request.remote_addr, length))
    return false;
  found_ = region;
  *mapped = reinterpret_cast<uint8_t*>(request.remote_addr);
  return true;
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

bool LocalBuffer::CopyTo(uint8_t* target, size_t length) {
  uint8_t* local = LocalBytes();
  if (local == nullptr) return false;
  memcpy(target, local, length);
  return true;
}

bool LocalBuffer::CopyFrom(const uint8_t* source, size_t length, std::vector<uint8_t>* carried) {
  uint8_t* local = LocalBytes();
  if (local == nullptr) return false;
  memcpy(local, source, length);
  return true;
}

uint8_t* LocalBuffer::LocalBytes() {
  if (!MemoryRegionTable::Get().IsRegisteredLocked(*region_)) return nullptr;
  return region_->addr + offset_;
}

}  // namespace rpma_sim
