// direct_request.cc -- the initiator's direct write, read and atomic write (see
// direct_area.h for the protocol with the target).
#include "sim/verbs/direct_request.h"

#include <infiniband/verbs.h>
#include <string.h>

#include "sim/transport/file_backing.h"
#include "sim/transport/process_vm.h"
#include "sim/verbs/memory_region.h"

namespace rpma_sim {

PeerMappings::~PeerMappings() {
  for (Mapping& mapping : mappings_) Unmap(&mapping);
}

void PeerMappings::Unmap(Mapping* mapping) {
  mapping->guard.reset();  // before the range can go
  if (mapping->base != nullptr) UnmapFileRange(mapping->base, mapping->length);
  mapping->base = nullptr;
  mapping->length = 0;
}

uint8_t* PeerMappings::Get(const DirectArea& area, const DirectGrant& grant) {
  Mapping& mapping = mappings_[grant.slot % DirectArea::kRegions];
  if (mapping.state == grant.state) return mapping.base;
  Unmap(&mapping);
  mapping.state = grant.state;
  FileBacking file;
  if (area.FileOf(grant, &file)) {
    mapping.base = MapFileRange(file, grant.region_length);
    if (mapping.base != nullptr) {
      mapping.length = grant.region_length;
      mapping.guard.reset(new MappingGuard(mapping.base, mapping.length));
    }
  }
  return mapping.base;
}

bool PeerMappings::TruncatedThenDropped(const DirectGrant& grant) {
  Mapping& mapping = mappings_[grant.slot % DirectArea::kRegions];
  if (mapping.guard == nullptr || !mapping.guard->truncated()) return false;
  Unmap(&mapping);  // the state stays: this region is not mapped again
  return true;
}

bool ExecuteOnPeer(ShmSegment& segment, PeerMappings& mappings, const SendRequest& request,
                   uint64_t sequence, bool* tell_target) {
  const SendOpcode opcode = request.opcode;
  const bool atomic = opcode == SendOpcode::kAtomicWrite;
  const bool places = opcode == SendOpcode::kWrite || atomic;
  if ((!places && opcode != SendOpcode::kRead) || request.with_imm || request.length == 0 ||
      (!atomic && !request.local))
    return false;
  DirectArea& area = segment.peer_direct();
  if (area.open.load(std::memory_order_relaxed) == 0) return false;
  if (places && !area.HasPlacementRoom()) return false;  // the request's execution makes room
  DirectGrant grant;
  int access = places ? IBV_ACCESS_REMOTE_WRITE : IBV_ACCESS_REMOTE_READ;
  if (!area.Find(request.rkey, request.remote_addr, request.length, access, &grant)) return false;
  // Mapped (once per region) before the access is announced: that may take system calls.
  uint8_t* mapped = mappings.Get(area, grant);
  uint8_t* remote =
      mapped == nullptr ? nullptr : mapped + (request.remote_addr - grant.region_addr);
  // An atomic write is one 8-byte store, which only a mapping gives (the responder also
  // answers for the unaligned ones).
  if (atomic && (remote == nullptr || reinterpret_cast<uintptr_t>(remote) % 8 != 0)) return false;
  bool done = false;
  area.Enter();
  if (area.StillGranted(grant)) {
    // Recorded before the bytes move, as the responder's NotePlacementLocked is.
    if (places)
      *tell_target = area.RecordPlacement(request.rkey, request.remote_addr - grant.region_addr,
                                          request.length, sequence + 1);
    if (atomic) {
      uint64_t value;
      memcpy(&value, request.inline_data, sizeof(value));
      __atomic_store_n(reinterpret_cast<uint64_t*>(remote), value, __ATOMIC_SEQ_CST);
      done = true;
    } else {
      ReaderLock table_lock(
          &MemoryRegionTable::Get().mutex());  // this side's buffer stays registered meanwhile
      if (MemoryRegionTable::Get().IsRegisteredLocked(*request.local)) {
        uint8_t* local = request.local->addr + request.local_offset;
        if (remote != nullptr) {
          if (places)
            memcpy(remote, local, request.length);
          else
            memcpy(local, remote, request.length);
          done = true;
        } else {
          done =
              places
                  ? WriteToProcess(segment.peer_pid(), request.remote_addr, local, request.length)
                  : ReadFromProcess(segment.peer_pid(), request.remote_addr, local, request.length);
        }
      }
    }
  }
  area.Leave();
  // The peer truncated the region's file under the copy: what it touched past the file's
  // end went nowhere (or read zeros). The target executes it instead, as it would any
  // request, and answers for its own memory.
  if (remote != nullptr && mappings.TruncatedThenDropped(grant)) return false;
  return done;
}

}  // namespace rpma_sim
