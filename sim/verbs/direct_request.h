// direct_request.h -- executing a write, read or atomic write on a peer process's registered
// memory itself, as an RDMA NIC does, without the peer's threads: the initiator's half of
// direct access (the target's is direct_target.h, the shared layout transport/direct_area.h).
//
// A region that is a shared mapping of a file (persistent memory, /dev/shm) is mapped into
// this process on first use and reached with plain copies; any other through process_vm
// (a system call per request).
#ifndef RPMA_SIM_VERBS_DIRECT_REQUEST_H_
#define RPMA_SIM_VERBS_DIRECT_REQUEST_H_

#include <stdint.h>

#include "sim/transport/shm_segment.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

// This process's mappings of a peer's region files, by the peer's table slot: one at most
// per slot (so as many as the table has entries), replaced when the slot's region changes,
// all unmapped with the object.
class PeerMappings {
 public:
  PeerMappings() = default;
  ~PeerMappings();
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;

  // Where [offset, offset + length) of the region `grant` names is in this process, the
  // region's file mapped now if it was not; null if that range is not in a file this
  // process can map (the region maps none, or the range is outside the part the file holds:
  // FileBacking::held_from). A region whose file cannot be mapped is not tried again.
  uint8_t* Get(const DirectArea& area, const DirectGrant& grant, uint64_t offset, uint64_t length);

  // Whether the peer truncated the file of `grant`'s mapping under it (mapping_guard.h): an
  // access since Get found a page gone. The mapping is then dropped, and the region is not
  // mapped again.
  bool TruncatedThenDropped(const DirectGrant& grant);

 private:
  struct Mapping {
    uint32_t state = 0;       // the slot's state it was made for (0: none)
    uint8_t* base = nullptr;  // the region's byte held_from
    uint64_t length = 0;      // bytes mapped from base
    uint64_t held_from = 0;
    std::unique_ptr<MappingGuard> guard;  // while base is mapped
  };
  void Unmap(Mapping* mapping);
  Mapping mappings_[DirectArea::kRegions];
};

// Executes `request`, the requester's work request `sequence`, on the memory of `segment`'s
// peer if it succeeds there now: a write or read (no immediate data, at least a byte), or an
// aligned atomic write to a mapped region, whose key the peer published with the bounds and
// access it needs, while the peer keeps direct access open and its placement records have
// room. Everything else, errors included, goes the usual way (false), so the responder
// reports it exactly as before. A write whose copy the kernel refused half-way returns false
// too; the usual path then places all of it. Requires the execution lock (which also guards
// `mappings`). Without ShmSegment::WeReachPeer() (no process_vm), only a range this side
// maps (a file of the peer's holds it) goes directly.
// *tell_target is set when the target should be told to take the placement records (a
// PLACED frame).
bool ExecuteOnPeer(ShmSegment& segment, PeerMappings& mappings, const SendRequest& request,
                   uint64_t sequence, bool* tell_target);

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_DIRECT_REQUEST_H_
