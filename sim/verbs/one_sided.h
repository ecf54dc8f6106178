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
class RegisteredMemory : public TargetMemory {
 public:
  RegisteredMemory(const ProtectionDomain* pd, uint32_t qp_num) : pd_(pd), qp_num_(qp_num) {}

  bool Find(const SendRequest& request, uint64_t length, int access, uint8_t** mapped) override
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex());
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

  bool CopyTo(uint8_t* target, size_t length) override
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex());
  bool CopyFrom(const uint8_t* source, size_t length, std::vector<uint8_t>* carried) override
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex());
  uint8_t* LocalBytes() override REQUIRES_SHARED(MemoryRegionTable::Get().mutex());

 private:
  std::shared_ptr<MemoryRegion> region_;
  uint64_t offset_;
};

// How the target's device executes what the portable path emulates.
struct DeviceModel {
  bool native_atomic_write = false;  // an unaligned atomic write fails (REM_INV_REQ_ERR)
  bool native_flush = false;         // a flush checks its whole range, not 8 bytes
};

// Executes the one-sided `request` (the requester's work request `sequence`) on `target`,
// moving bytes from or to `initiator` (null for a request that moves none); a read's bytes
// the initiator does not take at once are left in *read_data. The outcome is what the
// requester's completion says: REM_ACCESS_ERR for a range no key grants, REM_INV_REQ_ERR for
// an unaligned native atomic write, LOC_PROT_ERR when the initiator's buffer went away.
Outcome ExecuteOneSided(const SendRequest& request, uint64_t sequence, TargetMemory& target,
                        InitiatorBuffer* initiator, DeviceModel device,
                        std::vector<uint8_t>* read_data)
    REQUIRES_SHARED(MemoryRegionTable::Get().mutex());

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_ONE_SIDED_H_
