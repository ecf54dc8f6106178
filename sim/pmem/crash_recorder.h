// crash_recorder.h -- records a node's crash points as the node executes them (a journal,
// crash_journal.h).
//
// Owned by the node's PersistenceDomain and called under its lock, at each placement
// (before the bytes land: it keeps what they overwrite), each flush and each persist (with
// what it made durable). A region's final contents are taken when it is deregistered or the
// recording ends. Bounded by CrashJournal::kMaxBytes of kept bytes: past it the recording
// stops where it is. Not thread-safe: the domain locks.
#ifndef RPMA_SIM_PMEM_CRASH_RECORDER_H_
#define RPMA_SIM_PMEM_CRASH_RECORDER_H_

#include <stdint.h>

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/fabric/config.h"
#include "sim/pmem/crash_journal.h"

namespace rpma_sim {

struct PlacedRegion;

// Whether [address, address + length) is a shared file mapping: its path and the offset of
// its first byte in the file (found by a layer that knows how).
using FileOfMemory =
    std::function<bool(const void* address, uint64_t length, std::string* path, uint64_t* offset)>;

class CrashRecorder {
 public:
  // `sides`: the side of each live connection, by placer (the domain's, which outlives the
  // recorder and changes under the same lock).
  CrashRecorder(uint64_t node, const DeviceCaps& caps, uint64_t first_point, FileOfMemory file_of,
                const std::unordered_map<uint64_t, CrashSide>* sides);

  CrashRecorder(const CrashRecorder&) = delete;
  CrashRecorder& operator=(const CrashRecorder&) = delete;

  // Crash point `point`: [offset, offset + length) of `region` is about to be placed.
  void Placed(uint64_t point, const PlacedRegion& region, uint64_t offset, uint64_t length,
              const Placement& placement);
  // Crash point `point`: a flush (kFlush, of either kind) or a persist (kPersist) of
  // [offset, offset + length) of the region with `key` completed; `made_durable` is what it
  // made durable, `durable_values` the older values it made durable under bytes still
  // placed. `by` is the flush's queue pair and ordinal (placement's placer, first).
  void Durable(uint64_t point, CrashEventKind kind, FlushKind flush, uint32_t key, uint64_t offset,
               uint64_t length, const Placement& by, std::vector<CrashSpan> made_durable,
               std::vector<CrashValue> durable_values);
  // A region with placements from before the recording: known from the start, so that a
  // flush during it that makes those bytes durable names a region the journal has.
  void RegionBefore(const PlacedRegion& region);
  // The region with `key` is going away: its contents now are its final ones.
  void RegionGoing(uint32_t key);
  // Ends the recording now (`reason`): the regions' contents now are their final ones, and
  // nothing more is recorded. (A power failure, which reverts memory, ends it so.)
  void End(const std::string& reason);
  bool ended() const { return ended_; }

  // The journal: ends the recording first (normally, unless it ended already).
  CrashJournal Finish();

 private:
  struct Known {
    uint8_t* base = nullptr;
    size_t index = 0;    // in journal_.regions
    bool final = false;  // its final contents are taken
  };
  // The region's entry, made at its first placement.
  Known& Note(const PlacedRegion& region);
  void TakeFinal(Known* known);
  // Counts `bytes` more kept; ends the recording (truncated) past the limit.
  bool Keep(uint64_t bytes);

  // The side of `placer`'s connection, or kUnknown.
  CrashSide SideOf(uint64_t placer) const;

  const FileOfMemory file_of_;
  const std::unordered_map<uint64_t, CrashSide>* const sides_;
  CrashJournal journal_;
  std::map<uint32_t, Known> known_;  // by key
  uint64_t kept_bytes_ = 0;
  bool ended_ = false;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_CRASH_RECORDER_H_
