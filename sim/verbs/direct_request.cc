// direct_request.cc -- the initiator's direct write, read and atomic write (see
// direct_area.h for the protocol with the target).
#include "sim/verbs/direct_request.h"

#include <infiniband/verbs.h>
#include <string.h>

#include <atomic>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/common/ranges.h"
#include "sim/transport/file_backing.h"
#include "sim/transport/process_vm.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/one_sided.h"

namespace rpma_sim {
namespace {

// The address space every peer's region files may take in this process together: a quarter
// of x86-64's 128 TiB, more than the memory of any host whose processes share memory. A peer
// publishes the lengths it likes; past this, its regions are reached as unmapped ones.
constexpr uint64_t kMostPeerMappedBytes = uint64_t{32} << 40;
std::atomic<uint64_t> g_peer_mapped_bytes{0};

// Takes `length` bytes of the budget; false, taking nothing, if they are not left.
bool TakeAddressSpace(uint64_t length) {
  uint64_t taken = g_peer_mapped_bytes.load(std::memory_order_relaxed);
  do {
    if (length > kMostPeerMappedBytes - taken) return false;
  } while (!g_peer_mapped_bytes.compare_exchange_weak(taken, taken + length));
  return true;
}

}  // namespace

PeerMappings::~PeerMappings() {
  for (Mapping& mapping : mappings_) Unmap(&mapping);
}

void PeerMappings::Unmap(Mapping* mapping) {
  mapping->guard.reset();  // before the range can go
  if (mapping->base != nullptr) {
    UnmapFileRange(mapping->base, mapping->length);
    g_peer_mapped_bytes.fetch_sub(mapping->length);
  }
  mapping->base = nullptr;
  mapping->length = 0;
}

uint8_t* PeerMappings::Get(const DirectArea& area, const DirectGrant& grant, uint64_t offset,
                           uint64_t length, int owner) {
  Mapping& mapping = mappings_[grant.slot % DirectArea::kRegions];
  if (mapping.state != grant.state) {
    Unmap(&mapping);
    mapping.state = grant.state;
    FileBacking file;
    const bool held = area.FileOf(grant, &file) && file.held_from <= grant.region_length &&
                      file.held_length <= grant.region_length - file.held_from &&
                      file.held_length > 0;
    if (held && TakeAddressSpace(file.held_length)) {
      mapping.base = MapFileRange(file, file.held_length, owner);
      if (mapping.base == nullptr) g_peer_mapped_bytes.fetch_sub(file.held_length);
    }
    if (mapping.base != nullptr) {
      mapping.length = file.held_length;
      mapping.held_from = file.held_from;
      mapping.guard.reset(new MappingGuard(mapping.base, mapping.length));
    }
  }
  if (mapping.base == nullptr || !RangeWithin(mapping.held_from, mapping.length, offset, length))
    return nullptr;
  return mapping.base + (offset - mapping.held_from);
}

bool PeerMappings::TruncatedThenDropped(const DirectGrant& grant) {
  Mapping& mapping = mappings_[grant.slot % DirectArea::kRegions];
  if (mapping.guard == nullptr || !mapping.guard->truncated()) return false;
  Unmap(&mapping);  // the state stays: this region is not mapped again
  return true;
}

namespace {

// The peer's registered memory as its direct area publishes it. The range is found, and its
// region mapped once, before the executor runs (Prepare: mapping may take system calls);
// the access is announced to the peer (Enter) while the bytes move, and what is placed is
// recorded in the area for the peer's persistence model. One object may serve several
// requests in turn (Prepare each), its access announced until the last one's bytes moved;
// with a `batch`, the copies through process_vm are gathered there instead of made at once.
class PeerMemory final : public TargetMemory {
 public:
  PeerMemory(ShmSegment& segment, PeerMappings& mappings, ProcessVmBatch* batch = nullptr)
      : segment_(segment), area_(segment.peer_direct()), mappings_(mappings), batch_(batch) {}
  ~PeerMemory() override { Leave(); }

  // Whether the peer grants `request`'s range now, with room for its placement records; an
  // atomic write also needs the region mapped here, aligned (one 8-byte store).
  bool Prepare(const SendRequest& request) {
    prepared_ = false;
    mapped_ = nullptr;
    const bool places = request.opcode != SendOpcode::kRead;
    if (area_.open.load(std::memory_order_relaxed) != DirectArea::kOpen) return false;
    if (places && !area_.HasPlacementRoom()) return false;  // the request's execution makes room
    int access = places ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
    if (!area_.Find(request.rkey, request.remote_addr, request.length, access, &grant_))
      return false;
    // Null (process_vm instead) unless the whole range is in the part of the region its
    // file holds.
    mapped_ = mappings_.Get(area_, grant_, request.remote_addr - grant_.region_addr, request.length,
                            segment_.peer_pid());
    // Where process_vm may not reach the peer, the target's threads do.
    if (mapped_ == nullptr && !segment_.WeReachPeer()) return false;
    if (request.opcode == SendOpcode::kAtomicWrite &&
        (mapped_ == nullptr || reinterpret_cast<uintptr_t>(mapped_) % 8 != 0))
      return false;
    prepared_ = true;
    return true;
  }

  // Where the range Prepare found is in this process (null: reached through process_vm).
  uint8_t* mapped() const { return mapped_; }

  // The range Prepare found, if the peer still grants it.
  bool Find(const SendRequest& request, uint64_t length, int access, uint8_t** mapped) override {
    if (!prepared_) return false;
    if (!entered_) area_.Enter();
    entered_ = true;
    if (!area_.StillGranted(grant_)) return false;
    *mapped = mapped_;
    return true;
  }

  void NotePlacement(uint64_t address, uint64_t length, const SendRequest& request,
                     uint64_t sequence) override {
    if (area_.RecordPlacement(request.rkey, address - grant_.region_addr, length, sequence + 1))
      tell_target_ = true;
  }

  bool WriteUnmapped(uint64_t address, const uint8_t* bytes, uint64_t length) override {
    if (batch_ != nullptr)
      return batch_->Add(ProcessVmBatch::Direction::kToProcess, address,
                         const_cast<uint8_t*>(bytes), length);
    return WriteToProcess(segment_.peer_pid(), address, bytes, length);
  }
  bool ReadUnmapped(uint64_t address, uint8_t* bytes, uint64_t length) override {
    if (batch_ != nullptr)
      return batch_->Add(ProcessVmBatch::Direction::kFromProcess, address, bytes, length);
    return ReadFromProcess(segment_.peer_pid(), address, bytes, length);
  }

  // The access is over. Whether the peer truncated the region's file under the copy: what
  // it touched past the file's end went nowhere (or read zeros).
  bool LeaveTruncated() {
    Leave();
    return mapped_ != nullptr && mappings_.TruncatedThenDropped(grant_);
  }

  bool tell_target() const { return tell_target_; }

  // Whether the target stopped waiting for this access (it took over a second: this process
  // was stalled): what it moved may have gone nowhere, so it must not count as done.
  bool TooLate() const { return entered_ && area_.TargetGaveUp(); }

 private:
  void Leave() {
    if (entered_) area_.Leave();
    entered_ = false;
  }

  ShmSegment& segment_;
  DirectArea& area_;
  PeerMappings& mappings_;
  ProcessVmBatch* const batch_;
  DirectGrant grant_;
  uint8_t* mapped_ = nullptr;
  bool prepared_ = false;
  bool entered_ = false;
  bool tell_target_ = false;
};

}  // namespace

DirectStep ExecuteOnPeer(ShmSegment& segment, PeerMappings& mappings, const SendRequest& request,
                         uint64_t sequence, Batching batching,
                         std::vector<DeferredRequest>* deferred, bool* tell_target) {
  if (!RunsWithoutResponder(request, AtomicWrites::kAligned)) return DirectStep::kDeclined;
  PeerMemory peer(segment, mappings);
  if (!peer.Prepare(request)) return DirectStep::kDeclined;
  // A copy through process_vm may wait for others, to move with them in one system call.
  if (peer.mapped() == nullptr && batching == Batching::kMayWait &&
      request.opcode != SendOpcode::kAtomicWrite) {
    if (deferred->size() >= ProcessVmBatch::kCopies) return DirectStep::kBehindDeferred;
    deferred->push_back(DeferredRequest{request, sequence});
    return deferred->size() == 1 ? DirectStep::kDeferredFirst : DirectStep::kDeferred;
  }
  if (!deferred->empty()) return DirectStep::kBehindDeferred;
  bool done = false;
  {
    ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
    // None for an atomic write (its value is inline).
    uint8_t* local = RegisteredLocalBytes(request);
    if (request.local && local == nullptr) return DirectStep::kDeclined;  // the usual path
    HeldLocalBuffer initiator(local);
    std::vector<uint8_t> no_read_data;  // a local buffer takes a read's bytes itself
    done = ExecuteOneSided(request, sequence, peer, local ? &initiator : nullptr, DeviceModel{},
                           &no_read_data)
               .status == IBV_WC_SUCCESS;
    *tell_target = peer.tell_target();
  }
  // Too late, or a truncated region: the target executes the request instead, as it would
  // any request, and answers for its own memory (an error where the region is gone).
  const bool too_late = peer.TooLate();
  if (peer.LeaveTruncated() || too_late) return DirectStep::kDeclined;
  return done ? DirectStep::kExecuted : DirectStep::kDeclined;
}

size_t ExecuteBatchOnPeer(ShmSegment& segment, PeerMappings& mappings,
                          const std::vector<DeferredRequest>& requests, bool* tell_target) {
  ProcessVmBatch copies(segment.peer_pid());
  PeerMemory peer(segment, mappings, &copies);  // its access announced until the copies moved
  size_t executed = 0;                          // from the first, moved whole
  size_t gathered = 0;  // from the first, executed or with their copies in `copies`
  ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
  for (const DeferredRequest& deferred : requests) {
    const SendRequest& request = deferred.request;
    // Only what ExecuteOnPeer would copy through process_vm; the rest goes one at a time.
    if (!RunsWithoutResponder(request, AtomicWrites::kNone) || !peer.Prepare(request) ||
        peer.mapped() != nullptr)
      break;
    const auto direction = request.opcode == SendOpcode::kRead
                               ? ProcessVmBatch::Direction::kFromProcess
                               : ProcessVmBatch::Direction::kToProcess;
    if (copies.Refuses(direction)) {
      executed += copies.Move();
      if (executed < gathered) break;  // the rest waits for those the kernel refused
    }
    uint8_t* local = RegisteredLocalBytes(request);
    if (local == nullptr) break;  // the usual path reports it
    HeldLocalBuffer initiator(local);
    std::vector<uint8_t> no_read_data;  // the local buffer takes a read's bytes itself
    if (ExecuteOneSided(request, deferred.sequence, peer, &initiator, DeviceModel{}, &no_read_data)
            .status != IBV_WC_SUCCESS)
      break;
    ++gathered;
  }
  executed += copies.Move();  // none left if the kernel refused one above
  *tell_target = peer.tell_target();
  // Too late (as in ExecuteOnPeer): every one goes the usual way.
  return peer.TooLate() ? 0 : executed;
}

}  // namespace rpma_sim
