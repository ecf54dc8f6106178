// direct_area.h -- the part of a connection's shared-memory segment through which the peer
// executes one-sided operations on this side's memory itself, as a NIC would: no thread of
// this side runs for them.
//
// Each side of a segment owns one DirectArea (the *target*); the other side (the
// *initiator*) reads it. The target publishes the regions its queue pair may be reached in
// (key, bounds, access) and says whether direct access is open at all; the initiator finds
// the region of a write or read there, announces the access (in_use), checks once more that
// the region and the opening still stand, moves the bytes (process_vm) and withdraws. The
// target closes a region (or the whole area) by changing its state first and then waiting
// until in_use falls to zero: whichever of the two looks second sees the other (both are
// sequentially consistent), so no access that started before the close lands after it.
// A write also leaves a placement record for the target's persistence model, which the
// target reads when it next acts for the connection (a request, a deregistration, the end).
//
// Everything here can be written by the peer: the initiator uses what it finds only to
// reach the peer's own memory, and the target checks every placement record against its
// own region table before believing it.
#ifndef RPMA_SIM_TRANSPORT_DIRECT_AREA_H_
#define RPMA_SIM_TRANSPORT_DIRECT_AREA_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <chrono>
#include <functional>

#include "sim/transport/file_backing.h"

namespace rpma_sim {

// Waits until `count` is zero, `timeout` at most; false if it is not. For counts of accesses
// process `holder` has under way, each one copy long: the core is yielded while one may end
// in a moment, and past that the wait sleeps, and ends (true) once `holder` has ended (an
// access of a process killed during it never ends; process_gone.h).
bool WaitForZero(const std::atomic<uint32_t>& count, std::chrono::milliseconds timeout, int holder);

// One published region. `state` is odd while the entry is valid and changes on every
// publication and withdrawal (0: never used), so an initiator can tell that what it read
// still stands. A region that is a shared mapping of a file also names the file, which an
// initiator may map itself (file_backing.h).
struct DirectRegion {
  static constexpr size_t kPathWords = 16;  // paths of up to 128 bytes

  std::atomic<uint32_t> state;
  std::atomic<uint32_t> rkey;
  std::atomic<uint32_t> access;       // IBV_ACCESS_* flags
  std::atomic<uint32_t> path_length;  // 0: no file
  std::atomic<uint64_t> addr;
  std::atomic<uint64_t> length;
  std::atomic<uint64_t> file_offset;
  std::atomic<uint64_t> file_device;
  std::atomic<uint64_t> file_inode;
  std::atomic<uint64_t> held_from;  // the part of the region in the file (FileBacking)
  std::atomic<uint64_t> held_length;
  std::atomic<uint64_t> path[kPathWords];  // the path's bytes, 8 to a word
};

// What direct writes placed, for the target's persistence model: one range of a region and
// the requester's work requests (1-based ordinals) that placed it. The initiator grows the
// last record while the target has not taken it (writes that keep landing on one range, or
// next to each other, are one record); `claim` says who holds it meanwhile.
struct DirectPlacement {
  enum Claim : uint32_t { kFree = 0, kTaken = 1, kGrowing = 2 };
  std::atomic<uint32_t> claim;
  std::atomic<uint32_t> rkey;
  std::atomic<uint64_t> offset;
  std::atomic<uint64_t> length;
  std::atomic<uint64_t> first;
  std::atomic<uint64_t> last;
};

// A region as an initiator found it, and where to check again that it still stands.
struct DirectGrant {
  uint32_t slot = 0;
  uint32_t state = 0;
  uint64_t region_addr = 0;
  uint64_t region_length = 0;
};

// Lives inside a segment header (zeroed memory is an empty, closed area).
struct DirectArea {
  static constexpr size_t kRegions = 64;
  static constexpr size_t kPlacements = 256;
  // Every this many unread records the initiator tells the target to read them (a PLACED
  // frame); if the target still falls behind and the records fill up, the initiator sends
  // its requests the usual way, whose execution makes the target read them.
  static constexpr size_t kNoticeEvery = 32;

  // What the target says of direct access (`open`): allowed now, not now, or not any more
  // on this connection (the target stopped waiting for an access that took over a second:
  // an access still under way then went nowhere, and must not count as done).
  static constexpr uint32_t kClosed = 0;
  static constexpr uint32_t kOpen = 1;
  static constexpr uint32_t kGaveUp = 2;

  std::atomic<uint32_t> open;                // target: kClosed, kOpen or kGaveUp
  std::atomic<uint32_t> in_use;              // initiator: accesses under way
  std::atomic<uint64_t> placements_read;     // target
  std::atomic<uint64_t> placements_written;  // initiator
  DirectRegion regions[kRegions];
  DirectPlacement placements[kPlacements];

  // Target side.
  // Publishes a region (idempotent), with the file it maps if `file` is not null; false if
  // the table is full (then that region is reached the usual way only).
  bool Publish(uint32_t rkey, uint64_t addr, uint64_t length, uint32_t access,
               const FileBacking* file);
  // Withdraws `rkey`'s entry, if any; the caller then waits (WaitIdle) before it may assume
  // no access to the region lands any more. True if there was one.
  bool Withdraw(uint32_t rkey);
  // Waits until no access is under way, `timeout` at most; false if one still is.
  bool WaitIdle(std::chrono::milliseconds timeout, int initiator);
  // Whether the initiator wrote placement records not read yet (one load each side: for the
  // target's path of every request, which mostly finds none).
  bool HasUnreadPlacements() const {
    return placements_written.load(std::memory_order_acquire) !=
           placements_read.load(std::memory_order_relaxed);
  }
  // Calls `visit` for each placement record not read yet, in order, and marks them read. A
  // record the initiator is growing is waited for a moment, a yield of the core at a time,
  // at most `*yields_left` yields in all (decremented by those made); if it stays held, it
  // and the rest wait for the next call. Returns false (having read none) if the peer's
  // counters are impossible.
  bool ReadPlacements(const std::function<void(uint32_t rkey, uint64_t offset, uint64_t length,
                                               uint64_t first, uint64_t last)>& visit,
                      uint32_t* yields_left);

  // Initiator side.
  // Finds the valid entry of `rkey` that holds [address, address + length) with `access`.
  bool Find(uint32_t rkey, uint64_t address, uint64_t length, uint32_t access,
            DirectGrant* grant) const;
  // The file the granted region maps, if it names one and the grant still stands.
  bool FileOf(const DirectGrant& grant, FileBacking* file) const;
  // Whether what Find granted still stands and the area is open. Between Enter and Leave.
  bool StillGranted(const DirectGrant& grant) const;
  // Whether the target stopped waiting for accesses under way (kGaveUp). Before Leave.
  bool TargetGaveUp() const { return open.load() == kGaveUp; }
  void Enter() { in_use.fetch_add(1); }
  void Leave() { in_use.fetch_sub(1); }
  // Whether a placement record fits.
  bool HasPlacementRoom() const;
  // Records a placement (after HasPlacementRoom): grows the last record if the target has
  // not taken it and the range touches it, else appends one. True when the target should be
  // told to read them.
  bool RecordPlacement(uint32_t rkey, uint64_t offset, uint64_t length, uint64_t ordinal);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_DIRECT_AREA_H_
