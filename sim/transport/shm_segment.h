// shm_segment.h -- the shared-memory segment of one connection between two processes of a
// host: a header and two byte rings (client to server, server to client).
//
// Each ring is sized from the connection's queue depth (RingCapacityFor): 64 KiB each for
// librpma's default depth of 10, so an idle connection holds about 180 KiB of /dev/shm
// (48 KiB of it the two sides' direct areas).
//
// The client creates it (Boost.Interprocess, mode 0600, a name that carries the creator's
// pid and a random part) and offers its name and nonce in its connect request; the server
// opens it, checks the nonce (which proves both sides see the same /dev/shm: the same
// host), and removes the name at once: from then on only the two mappings keep it, so it
// disappears with the connection however the processes end. The client removes the name
// too when its request is answered, and a segment whose creator died before that is
// removed by the next process that creates one (RemoveStale). The creator holds a shared
// flock on the segment until it removes the name: the kernel drops it when the process
// dies, in whatever pid namespace it ran (Bazel's sandboxes, containers sharing /dev/shm),
// so a segment nobody locks is one whose creator is gone.
#ifndef RPMA_SIM_TRANSPORT_SHM_SEGMENT_H_
#define RPMA_SIM_TRANSPORT_SHM_SEGMENT_H_

#include <stdint.h>

#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <boost/interprocess/shared_memory_object.hpp>
#include <memory>
#include <string>

#include "sim/common/mutex.h"
#include "sim/common/status.h"
#include "sim/transport/direct_area.h"
#include "sim/transport/mapping_guard.h"
#include "sim/transport/ptrace_permit.h"
#include "sim/transport/shm_ring.h"

namespace rpma_sim {

struct SegmentHeader;

class ShmSegment {
 public:
  enum Side { kClient = 0, kServer = 1 };

  // The capacity of each ring for a queue pair with `queue_depth` work requests under way:
  // 4 KiB and a frame header per request, rounded up to a power of two between
  // kMinRingCapacity and kMaxRingCapacity.
  static size_t RingCapacityFor(uint32_t queue_depth);
  static constexpr size_t kMinRingCapacity = 64 << 10;
  static constexpr size_t kMaxRingCapacity = 4 << 20;

  // Client: creates a new segment (after removing stale ones, at most every
  // kStaleAfterSeconds) with rings of
  // `ring_capacity` bytes (a multiple of 4 KiB between the bounds above). kProvider (logged)
  // if /dev/shm has no room.
  static Status Create(size_t ring_capacity, std::shared_ptr<ShmSegment>* out);
  // Server: opens the segment `name` offered with `nonce`. kProvider (logged) if there is
  // no such segment here, it is not one of ours, or the nonce differs.
  static Status Open(const std::string& name, uint64_t nonce, std::shared_ptr<ShmSegment>* out);
  // Removes the segments whose creator no longer holds them (it died before the peer
  // answered) and that are older than kStaleAfterSeconds; returns how many.
  static int RemoveStale();
  // RemoveStale, unless this process looked less than kStaleAfterSeconds ago.
  static void RemoveStaleNowAndThen();
  // A segment is this old at least before it counts as stale: between creating it and
  // taking its lock, a live creator holds no lock either.
  static constexpr int kStaleAfterSeconds = 10;
  // The prefix of every segment name (as in /dev/shm/<name>).
  static constexpr const char* kNamePrefix = "rpma-sim-";

  // The segment's layout, for the creator, the server's check and tests: a header
  // (HeaderSize() bytes at the start of its first page), the two sides' direct areas
  // (direct_area.h; from the next page), then the client-to-server ring's data, then the
  // server-to-client ring's.
  static size_t HeaderSize();
  static size_t SizeFor(size_t ring_capacity);
  // Creator: starts the header of a new, zeroed mapping of SizeFor(`ring_capacity`) bytes.
  static void InitHeader(void* mapping, size_t ring_capacity, uint64_t nonce);
  // Server: the check of a segment a peer offered (`size` bytes mapped at `mapping`, which
  // the peer can write) before any of it is used: magic, version, the `nonce` offered, a
  // valid ring capacity and a size that fits it. Returns the ring capacity, read once (the
  // peer could change it after the check), or 0 if it is not the segment offered.
  static size_t CheckHeader(const void* mapping, size_t size, uint64_t nonce);
  // What a header says of the segment's two sides (indexed by Side): rpma-sim-info lists
  // the host's connections so (segment_census.h).
  struct HeaderView {
    uint64_t nonce = 0;
    int pid[2] = {0, 0};
    bool reaches_peer[2] = {false, false};  // side i reaches the other by process_vm
    bool named_peer[2] = {false, false};    // side i named the other its ptracer (Yama)
  };
  // Reads a header (HeaderSize() bytes at `bytes`, a copy or a mapping, aligned as a
  // mapping is). False if it is not a header of this version.
  static bool ReadHeader(const void* bytes, HeaderView* view);
  // The ring that carries `from`'s frames in a segment at `mapping` whose rings hold
  // `ring_capacity` bytes each (as InitHeader or CheckHeader gave it).
  static ShmRing RingOf(void* mapping, size_t ring_capacity, Side from);

  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Removes the name (idempotent); the mappings stay valid.
  void Unlink();

  const std::string& name() const { return name_; }
  uint64_t nonce() const;
  Side side() const { return side_; }
  // The peer's pid as ProbePeer found it (0 before): never re-read from the segment, which
  // the peer can write.
  int peer_pid() const { return peer_pid_; }

  // Where this side mapped the segment: the same address for both sides in one process.
  const void* mapping() const { return region_->get_address(); }

  // Whether the peer truncated the segment under this side's mapping (mapping_guard.h): an
  // access found a page gone, and the rings and areas read zeros from there on. Whatever
  // uses the segment checks it after its accesses and ends the connection.
  bool truncated() const { return guard_->truncated(); }

  // The ring this side reads and the one it writes.
  ShmRing& inbound() { return inbound_; }
  ShmRing& outbound() { return outbound_; }

  // Checks whether this process may move bytes in and out of the peer's memory
  // (process_vm_readv/writev; the kernel's ptrace rules decide) and records the answer,
  // here and in the header for the peer to read. A peer naming this very process is
  // believed only if the other side of the segment is open in this process too. Under
  // Yama, first names the peer as the process that may reach this one (ptrace_permit.h),
  // and says so in the header.
  bool ProbePeer();
  // Whether this side's probe succeeded, and whether the peer says its did. A probe that
  // failed is made once more when the peer has named this process since (under Yama the
  // server probes before its client can name it): the first call after that makes it.
  bool WeReachPeer() {
    return we_reach_peer_.load(std::memory_order_acquire) || ProbeAgainIfNamed();
  }
  bool PeerReachesUs() const;
  // What naming the peer under Yama gave (kNotNeeded before ProbePeer).
  PermitOutcome permit() const { return permit_; }

  // Copies between the peer's memory at `address` and `local` (process_vm), unless the peer
  // revoked references to its buffers (RevokeReferences) or the kernel refuses. Only after
  // a successful ProbePeer.
  bool ReadPeerMemory(uint64_t address, void* local, size_t length);
  bool WritePeerMemory(uint64_t address, const void* local, size_t length);
  // The area through which the peer reaches this side's registered memory itself, and the
  // peer's, through which this side reaches the peer's (direct_area.h).
  DirectArea& own_direct() { return *own_direct_; }
  DirectArea& peer_direct() { return *peer_direct_; }

  // This side's buffers may no longer be named: the peer's later copies fail, and one under
  // way is waited for (a second at most), so that the caller may report its requests done.
  void RevokeReferences();

 private:
  ShmSegment(std::string name, Side side,
             std::shared_ptr<boost::interprocess::mapped_region> region, size_t ring_capacity);

  // The creator's handle on the named object, whose fd holds the flock; closed by Unlink.
  Mutex object_mutex_;
  std::unique_ptr<boost::interprocess::shared_memory_object> object_ GUARDED_BY(object_mutex_);

  // Runs `copy` while the peer allows references to its buffers (see RevokeReferences).
  template <typename Copy>
  bool WithPeerReferences(Copy copy);

  std::string name_;
  Side side_;
  // Probes the peer again if it named this process after this side's probe failed (once).
  bool ProbeAgainIfNamed();
  // Whether process_vm reaches the peer; records the answer in the header too.
  bool ProbeReach();

  int peer_pid_ = 0;
  uint64_t peer_base_ = 0;  // where peer_pid_ maps the segment (checked with it)
  std::atomic<bool> we_reach_peer_{false};
  std::atomic<bool> probed_again_{false};
  PermitOutcome permit_ = PermitOutcome::kNotNeeded;
  int permit_pid_ = 0;  // the process named, while permit_ is kGranted
  // Shared by both sides when both are in this process.
  std::shared_ptr<boost::interprocess::mapped_region> region_;
  // Declared after region_: it stops guarding before the mapping can go.
  std::unique_ptr<MappingGuard> guard_;
  SegmentHeader* header_;
  DirectArea* own_direct_;
  DirectArea* peer_direct_;
  ShmRing inbound_;
  ShmRing outbound_;
  std::atomic<bool> unlinked_{false};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SHM_SEGMENT_H_
