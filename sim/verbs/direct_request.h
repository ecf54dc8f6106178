// direct_request.h -- executing a write, read or atomic write on a peer process's registered
// memory itself, as an RDMA NIC does, without the peer's threads: the initiator's half of
// direct access (the target's is direct_target.h, the shared layout transport/direct_area.h).
//
// A region that is a shared mapping of a file (persistent memory, /dev/shm) is mapped into
// this process on first use and reached with plain copies; any other through process_vm: a
// system call per request, or one for many (ExecuteBatchOnPeer).
#ifndef RPMA_SIM_VERBS_DIRECT_REQUEST_H_
#define RPMA_SIM_VERBS_DIRECT_REQUEST_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "sim/transport/shm_segment.h"
#include "sim/verbs/remote_link.h"
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
  // region's file (one of process `owner`'s, the peer: MapFileRange) mapped now if it was
  // not; null if that range is not in a file this process can map (the region maps none, or
  // the range is outside the part the file holds: FileBacking::held_from), or if mapping it
  // would take the peers' mappings of the process past 32 TiB of address space. A region
  // whose file cannot be mapped is not tried again.
  uint8_t* Get(const DirectArea& area, const DirectGrant& grant, uint64_t offset, uint64_t length,
               int owner);

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

// A write or read kept to be executed on the peer's memory with others (ExecuteBatchOnPeer).
struct DeferredRequest {
  SendRequest request;
  uint64_t sequence = 0;
};

// What ExecuteOnPeer did with a request.
enum class DirectStep {
  kDeclined,        // nothing: it goes the usual way (through the responder)
  kExecuted,        // its bytes moved
  kDeferred,        // kept to move with others (ExecuteBatchOnPeer)
  kDeferredFirst,   // the same, and none was kept before it
  kBehindDeferred,  // nothing yet: the kept ones go first (or too many are kept); then ask again
};

// Executes `request`, the requester's work request `sequence`, on the memory of `segment`'s
// peer if it succeeds there now: a write or read (no immediate data, at least a byte), or an
// aligned atomic write to a mapped region, whose key the peer published with the bounds and
// access it needs, while the peer keeps direct access open and its placement records have
// room. Everything else, errors included, goes the usual way (kDeclined), so the responder
// reports it exactly as before. A write whose copy the kernel refused half-way is declined
// too; the usual path then places all of it. Without ShmSegment::WeReachPeer() (no
// process_vm), only a range this side maps (a file of the peer's holds it) goes directly.
//
// With Batching::kMayWait, a write or read that would copy through process_vm (a range no
// file of the peer's holds here: a heap region's partial first or last page) is kept in
// *deferred instead, up to ProcessVmBatch::kCopies. Nothing executes while *deferred keeps
// any (kBehindDeferred). Requires the execution lock (which also guards `mappings` and
// *deferred). *tell_target is set when the target should be told to take the placement
// records (a PLACED frame).
DirectStep ExecuteOnPeer(ShmSegment& segment, PeerMappings& mappings, const SendRequest& request,
                         uint64_t sequence, Batching batching,
                         std::vector<DeferredRequest>* deferred, bool* tell_target);

// Executes `requests` in order as ExecuteOnPeer would, with their copies gathered: one
// process_vm_writev for a run of writes, one process_vm_readv for a run of reads, at most
// ProcessVmBatch::kCopies to a call. Returns how many of them, from the first, executed;
// the caller submits the rest as it would have without the batch (the first of them may
// have placed part of its bytes, as ExecuteOnPeer's refused copy does). Requires the
// execution lock; *tell_target as ExecuteOnPeer's.
size_t ExecuteBatchOnPeer(ShmSegment& segment, PeerMappings& mappings,
                          const std::vector<DeferredRequest>& requests, bool* tell_target);

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_DIRECT_REQUEST_H_
