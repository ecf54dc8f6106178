// one_sided.h -- the one executor of a one-sided operation (write, read, atomic write,
// flush) on a target's registered memory, whoever runs it: the target's responder for a
// request that arrived, an in-process requester for its peer (InprocLink), a requester
// that reaches its peer's memory over a shared-memory connection (direct_request.h).
//
// What differs between them is behind two interfaces: where the target range is and who
// hears about what is placed (TargetMemory), and where the initiator's bytes are
// (InitiatorBuffer, remote_link.h).
#ifndef RPMA_SIM_VERBS_ONE_SIDED_H_
#define RPMA_SIM_VERBS_ONE_SIDED_H_

#include <stdint.h>
#include <string.h>

#include <memory>
#include <vector>

#include "sim/verbs/memory_region.h"
#include "sim/verbs/remote_link.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

class ProtectionDomain;

// Which atomic writes a caller may run without its responder: none (in process, where the
// responder's path is as short), or aligned ones to memory it maps (direct access).
enum class AtomicWrites { kNone, kAligned };

// Whether `request` may run without the target's responder at all: a write or read of at
// least a byte, with no immediate data, from a local buffer; or an atomic write where
// `atomics` allows. Everything else (flushes, messages, immediate data) needs the
// responder's queue pair. The caller still falls back to the responder if the executor
// fails: then the responder reports the error exactly as it would have.
bool RunsWithoutResponder(const SendRequest& request, AtomicWrites atomics);

// Where the target's registered memory is, as the side that executes sees it.
class TargetMemory {
 public:
  virtual ~TargetMemory() = default;

  // The target range [address, address + length) of a key `rkey` registered with `access`:
  // true if there is one, with *mapped where its first byte is in this process (null when
  // the bytes are reached through the kernel: WriteUnmapped/ReadUnmapped).
  virtual bool Find(const SendRequest& request, uint64_t length, int access, uint8_t** mapped)
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) = 0;
  // `length` bytes at `address` are about to be placed by `request`, the requester's work
  // request `sequence`: before the bytes move, as a NIC's write is ordered.
  virtual void NotePlacement(uint64_t address, uint64_t length, const SendRequest& request,
                             uint64_t sequence) = 0;
  // A flush of `request` (only where flushes execute: the responder's memory).
  virtual void Flush(const SendRequest& request, uint64_t sequence) {}
  // Copies to or from a range Find returned no mapping for. False if the kernel refused.
  virtual bool WriteUnmapped(uint64_t address, const uint8_t* bytes, uint64_t length) {
    return false;
  }
  virtual bool ReadUnmapped(uint64_t address, uint8_t* bytes, uint64_t length) { return false; }
};

// The target is this process: regions found in the memory-region table under `pd`,
// placements and flushes told to the domain's persistence model as queue pair `qp_num`'s.
class RegisteredMemory final : public TargetMemory {
 public:
  RegisteredMemory(const ProtectionDomain* pd, uint32_t qp_num) : pd_(pd), qp_num_(qp_num) {}

  bool Find(const SendRequest& request, uint64_t length, int access, uint8_t** mapped) override
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
    const MemoryRegion* region = MemoryRegionTable::Get().FindLocked(request.rkey);
    if (region == nullptr || region->pd != pd_ || (region->access & access) != access ||
        !region->Contains(request.remote_addr, length))
      return false;
    found_ = region;
    *mapped = reinterpret_cast<uint8_t*>(request.remote_addr);
    return true;
  }
  void NotePlacement(uint64_t address, uint64_t length, const SendRequest& request,
                     uint64_t sequence) override;
  void Flush(const SendRequest& request, uint64_t sequence) override;

  // Tells the persistence model that `length` bytes at `offset` of `region` are about to
  // be placed by `request` (writes, atomic writes and messages alike).
  static void NotePlaced(const ProtectionDomain* pd, uint32_t qp_num, const MemoryRegion& region,
                         uint64_t offset, uint64_t length, const SendRequest& request,
                         uint64_t sequence);

 private:
  const ProtectionDomain* pd_;
  uint32_t qp_num_;
  const MemoryRegion* found_ = nullptr;  // what Find found last (NotePlacement, Flush)
};

// The initiator's buffer is registered memory of this process (an in-process requester, a
// direct requester): copied straight between the two, while it stays registered.
class LocalBuffer : public InitiatorBuffer {
 public:
  LocalBuffer(std::shared_ptr<MemoryRegion> region, uint64_t offset)
      : region_(std::move(region)), offset_(offset) {}

  ibv_wc_status CopyTo(uint8_t* target, size_t length) override
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex());
  ibv_wc_status CopyFrom(const uint8_t* source, size_t length,
                         std::vector<uint8_t>* carried) override
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex());
  uint8_t* LocalBytes() override REQUIRES_SHARED(MemoryRegionTable::Get().mutex());

 private:
  std::shared_ptr<MemoryRegion> region_;
  uint64_t offset_;
};

// Where `request`'s local buffer is, if its region is registered still (null otherwise);
// valid while the caller holds the table's shared lock.
uint8_t* RegisteredLocalBytes(const SendRequest& request)
    REQUIRES_SHARED(MemoryRegionTable::Get().mutex());

// A local buffer found registered (RegisteredLocalBytes) by a caller that holds the table's
// shared lock across the execution: its copies need no lookup of their own.
class HeldLocalBuffer final : public InitiatorBuffer {
 public:
  explicit HeldLocalBuffer(uint8_t* bytes) : bytes_(bytes) {}

  ibv_wc_status CopyTo(uint8_t* target, size_t length) override {
    return StatusOfPlacing(GuardedCopy(target, bytes_, length));
  }
  ibv_wc_status CopyFrom(const uint8_t* source, size_t length,
                         std::vector<uint8_t>* carried) override {
    return StatusOfFetching(GuardedCopy(bytes_, source, length));
  }
  uint8_t* LocalBytes() override { return bytes_; }

 private:
  uint8_t* bytes_;
};

// How the target's device executes what the portable path emulates.
struct DeviceModel {
  bool native_atomic_write = false;  // an unaligned atomic write fails (REM_INV_REQ_ERR)
  bool native_flush = false;         // a flush checks its whole range, not 8 bytes
};

// Executes the one-sided `request` (the requester's work request `sequence`) on `target`,
// moving bytes from or to `initiator` (null for a request that moves none); a read's bytes
// the initiator does not take at once are left in *read_data. The outcome is what the
// requester's completion says: REM_ACCESS_ERR for a range no key grants (or whose pages
// the target's application unmapped: guarded_copy.h), REM_INV_REQ_ERR for an unaligned
// native atomic write, LOC_PROT_ERR when the initiator's buffer went away.
//
// A template over the target's and the initiator's classes, so that a caller passing final
// ones (RegisteredMemory, HeldLocalBuffer) pays no virtual call: this runs once per
// operation on the fastest paths.
namespace one_sided_internal {

// A write's bytes, from the initiator to the target range: the status the copy gives
// (a copy through the kernel that fails is the initiator's buffer gone meanwhile).
template <typename Target, typename Initiator>
ibv_wc_status Place(Target& target, uint8_t* mapped, const SendRequest& request,
                    Initiator* initiator) REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
  if (initiator == nullptr) return IBV_WC_LOC_PROT_ERR;
  if (mapped != nullptr) return initiator->CopyTo(mapped, request.length);
  const uint8_t* local = initiator->LocalBytes();
  return local != nullptr && target.WriteUnmapped(request.remote_addr, local, request.length)
             ? IBV_WC_SUCCESS
             : IBV_WC_LOC_PROT_ERR;
}

// A read's bytes, from the target range to the initiator (or *read_data), as Place.
template <typename Target, typename Initiator>
ibv_wc_status Fetch(Target& target, const uint8_t* mapped, const SendRequest& request,
                    Initiator* initiator, std::vector<uint8_t>* read_data)
    REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
  if (initiator == nullptr) return IBV_WC_LOC_PROT_ERR;
  if (mapped != nullptr) return initiator->CopyFrom(mapped, request.length, read_data);
  uint8_t* local = initiator->LocalBytes();
  return local != nullptr && target.ReadUnmapped(request.remote_addr, local, request.length)
             ? IBV_WC_SUCCESS
             : IBV_WC_LOC_PROT_ERR;
}

}  // namespace one_sided_internal

template <typename Target, typename Initiator>
Outcome ExecuteOneSided(const SendRequest& request, uint64_t sequence, Target& target,
                        Initiator* initiator, DeviceModel device, std::vector<uint8_t>* read_data)
    REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
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
      outcome.status = one_sided_internal::Place(target, mapped, request, initiator);
      break;
    case SendOpcode::kRead:
      if (request.length == 0) break;
      if (!target.Find(request, request.length, IBV_ACCESS_REMOTE_READ, &mapped)) {
        outcome.status = IBV_WC_REM_ACCESS_ERR;
        break;
      }
      outcome.status = one_sided_internal::Fetch(target, mapped, request, initiator, read_data);
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
      } else {
        // The portable path's unaligned write is a plain 8-byte copy.
        CopyResult result = aligned ? GuardedStore64(reinterpret_cast<uint64_t*>(mapped), value)
                                    : GuardedCopy(mapped, &value, sizeof(value));
        outcome.status = StatusOfPlacing(result);
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

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_ONE_SIDED_H_
