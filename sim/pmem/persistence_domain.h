// persistence_domain.h -- what a node's registered memory would keep through a power
// failure: the persistence model of one node (one rpma_peer).
//
// Every byte a remote operation places in the node's registered memory (a write, a write
// with immediate data, an atomic write, a send into a receive buffer) is *placed* until a
// completed flush makes it *durable*. What a flush makes durable depends on the node's
// device:
//   persistent memory (default): a PERSISTENT flush makes exactly its range durable, a
//     VISIBILITY flush nothing;
//   eADR: a VISIBILITY flush is durable too;
//   flush scope qp (the portable read-after-write flush on some platforms): a PERSISTENT
//     flush also makes every earlier placement of its connection durable, including what
//     another connection wrote over since (superseded_values.h);
//   DRAM: nothing is ever durable.
// The target's own CPU can make bytes durable (Persist: rpma_sim_persist). Local stores are
// not seen otherwise.
//
// Armed (for a power failure: Arm(), or every node while a power_failure rule is in force),
// a placement first saves the durable value of the bytes it covers; a power failure then
// puts back all of them, a seeded subset of 8-byte words or 64-byte lines, or none.
// Unarmed, only the ranges are kept, for the report: when a connection ends, what it placed
// and never made durable is logged (WARNING), with the flush that would have covered it.
//
// Lock order: a queue pair's execution lock, the memory-region table's lock, then this
// domain's lock. Nothing here blocks or calls back.
#ifndef RPMA_SIM_PMEM_PERSISTENCE_DOMAIN_H_
#define RPMA_SIM_PMEM_PERSISTENCE_DOMAIN_H_

#include <stdint.h>

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/fabric/config.h"
#include "sim/pmem/crash_journal.h"
#include "sim/pmem/crash_recorder.h"
#include "sim/pmem/placed_ranges.h"
#include "sim/pmem/pre_images.h"
#include "sim/pmem/superseded_values.h"

namespace rpma_sim {

// What of the bytes not durable a power failure reverts.
enum class LossMode { kAll, kWords, kLines, kNone };
const char* LossModeName(LossMode mode);  // "all", "words", "lines", "none"

// A registered region as the model sees it: its remote key and where it lives.
struct PlacedRegion {
  uint32_t key;
  uint8_t* base;
  uint64_t length;
  uint32_t ordinal = 0;  // among the node's registrations (MemoryRegion::ordinal)
};

// In a torn power failure, the one word or line that survives while every other unit not
// durable reverts: the unit that holds byte `offset` of the node's `ordinal`th region.
struct TornKeep {
  uint32_t ordinal;
  uint64_t offset;
};

class PersistenceDomain {
 public:
  explicit PersistenceDomain(const DeviceCaps& caps);
  ~PersistenceDomain();

  PersistenceDomain(const PersistenceDomain&) = delete;
  PersistenceDomain& operator=(const PersistenceDomain&) = delete;

  // Arms this domain for a power failure: from now on placements save their pre-images.
  // Bytes placed before (tracked for the report) keep the value they have now.
  void Arm();
  bool armed() const { return armed_.load(std::memory_order_relaxed); }
  // Arms every domain of the process, and those created from now on (power_failure rules).
  static void ArmAll();
  // Domains created from now on are not armed.
  static void StopArmingNew();

  // A remote operation is about to place region[offset, offset + length). Called before the
  // bytes are copied, with the region's table lock held (the region stays registered).
  void Place(const PlacedRegion& region, uint64_t offset, uint64_t length,
             const Placement& placement) {
    if (!tracking()) return;
    PlaceTracked(region, offset, length, placement);
  }
  // A flush of region[offset, offset + length), work request `ordinal` (1-based) of the
  // connection of `placer`, completed.
  void Flush(const PlacedRegion& region, uint64_t offset, uint64_t length, FlushKind flush,
             uint64_t placer, uint64_t ordinal);
  // The target's CPU made region[offset, offset + length) durable.
  void Persist(const PlacedRegion& region, uint64_t offset, uint64_t length);

  // The connection of `placer` is a server's (or a client's): a recording names the side
  // with each crash point its requests make (crash_journal.h). Until EndPlacer.
  void NamePlacer(uint64_t placer, bool server);
  // The connection of `placer` ended: reports what it placed and never made durable (unless
  // RPMA_SIM_PERSISTENCE_REPORT=0). `connection` names it in the log.
  void EndPlacer(uint64_t placer, const std::string& connection);
  // Reports every range of this domain not durable; returns how many.
  size_t Report();
  // Reports every domain of the process; returns how many ranges.
  static size_t ReportAll();
  // The region is being deregistered: its ranges are reported and forgotten.
  void ForgetRegion(uint32_t key);

  // Reverts what was not durable as `mode` says (requires armed(), unless kNone) and makes
  // everything durable: after a power failure memory holds what it holds. `seed` chooses
  // the words or lines, unless `keep` names the only one that survives. Returns the bytes
  // reverted.
  uint64_t PowerFail(LossMode mode, uint64_t seed, const TornKeep* keep = nullptr);

  // Crash points (crash_journal.h): the events that change what a power failure leaves,
  // counted while the domain tracks placements (armed, or for the report) since it was made.
  uint64_t points() const { return points_.load(std::memory_order_acquire); }
  // Starts recording this node's crash points (arming it): `node` names it, `file_of` finds
  // a region's file. Recording already: nothing changes.
  void StartRecording(uint64_t node, FileOfMemory file_of);
  bool recording();
  // Stops recording and returns the journal (empty of events if it was not recording).
  CrashJournal StopRecording();

 private:
  struct RegionState {
    uint8_t* base = nullptr;
    uint64_t length = 0;
    uint32_t ordinal = 0;
    PlacedRanges placed;
    PreImages pre_images;
  };

  // Whether placements are recorded at all: for the report (persistent memory, report on)
  // or for a power failure.
  bool tracking() const { return report_ || armed(); }
  // Whether a PERSISTENT flush drains every earlier write of its connection (flush scope qp,
  // with librpma's portable flush).
  bool flushes_connection() const { return caps_.flush_scope_qp && !caps_.native_flush; }
  // Calls `visit(key, state, begin, end)` for each region that holds some of the addresses
  // [first, last): [begin, end) are those, in the region's offsets.
  template <typename Visit>
  void ForEachRegionWithinLocked(uintptr_t first, uintptr_t last, Visit&& visit) REQUIRES(mutex_);
  // What makes a range of region `key` durable also tells: the superseded values of its
  // bytes end, and a recording notes it in *made.
  PlacedRanges::Span DurableSpanLocked(uint32_t key, const RegionState& state,
                                       std::vector<CrashSpan>* made) REQUIRES(mutex_);
  // The addresses [first, last) are about to be placed by `placer`: keeps the values other
  // connections placed there and nothing made durable.
  void KeepSupersededLocked(uintptr_t first, uintptr_t last, uint64_t placer) REQUIRES(mutex_);
  // A flush of `placer`'s connection drains its superseded values: each becomes the durable
  // value of its bytes that are still placed (told to *values, if not null, for a recording).
  void DrainSupersededLocked(uint64_t placer, std::vector<CrashValue>* values) REQUIRES(mutex_);
  void PlaceTracked(const PlacedRegion& region, uint64_t offset, uint64_t length,
                    const Placement& placement);
  // The report of the ranges that `select(key, placement)` picks (of `placer` alone, if not
  // 0: found without looking at the others): its lines (at most kReportLines ranges) are
  // added to *report, for the caller to log once it let go of the lock (a log line is a
  // system call). Returns how many ranges there are.
  template <typename Select>
  size_t ReportLocked(const char* heading, Select select, uint64_t placer,
                      std::vector<std::string>* report) REQUIRES(mutex_);
  // Report's lines, for the caller to log.
  size_t Report(std::vector<std::string>* report) EXCLUDES(mutex_);
  // What the report says would have made a range durable.
  std::string RemedyLocked() const REQUIRES(mutex_);
  void DropPreImagesIfDurableLocked(RegionState* state) REQUIRES(mutex_);
  // For the bytes [begin, end) of the region `key` (its state: `mine`), newly placed: where
  // another registration of the same memory has placed them and nothing made them durable,
  // their durable value is that region's pre-image, not memory now.
  void AdoptPreImagesLocked(uint32_t key, RegionState* mine, uint64_t begin, uint64_t end)
      REQUIRES(mutex_);
  // Sets aliased_ if `region` (placed in for the first time) shares memory with another.
  void NoteAliasesLocked(const PlacedRegion& region) REQUIRES(mutex_);
  // The addresses [first, last) were just placed through the region `key` (which adopted
  // their pre-images): every other registration of the same memory lets them go, so that a
  // byte is placed in one region only, by its latest placement (a flush of the connection
  // that placed it before finds it no longer its own).
  void HandOverLocked(uint32_t key, uintptr_t first, uintptr_t last) REQUIRES(mutex_);
  // PowerFail's work under the lock: adds the bytes not durable and those reverted.
  void PowerFailLocked(LossMode mode, uint64_t seed, const TornKeep* keep, uint64_t* placed,
                       uint64_t* reverted) REQUIRES(mutex_);

  // The durable event at a new crash point, by the work request `by` names (none for a
  // persist): `made_durable` is what it made durable, `durable_values` the older values it
  // made durable under bytes still placed.
  void NoteDurableLocked(CrashEventKind kind, FlushKind flush, const PlacedRegion& region,
                         uint64_t offset, uint64_t length, const Placement& by,
                         std::vector<CrashSpan> made_durable,
                         std::vector<CrashValue> durable_values = {}) REQUIRES(mutex_);

  const DeviceCaps caps_;
  const bool report_;  // persistent memory, report on
  std::atomic<bool> armed_{false};
  std::atomic<uint64_t> points_{0};  // written under mutex_
  Mutex mutex_;
  std::unordered_map<uint32_t, RegionState> regions_ GUARDED_BY(mutex_);
  // Some memory is registered twice (and placed in through both): placements then look at
  // the other registrations too. Set once, never cleared.
  bool aliased_ GUARDED_BY(mutex_) = false;
  SupersededValues superseded_ GUARDED_BY(mutex_);  // armed, flushes_connection() only
  // The region placed in last, found again without hashing (null: look it up).
  uint32_t last_key_ GUARDED_BY(mutex_) = 0;
  RegionState* last_state_ GUARDED_BY(mutex_) = nullptr;
  uint64_t failures_ GUARDED_BY(mutex_) = 0;
  std::unique_ptr<CrashRecorder> recorder_ GUARDED_BY(mutex_);        // while recording
  std::unordered_map<uint64_t, CrashSide> sides_ GUARDED_BY(mutex_);  // NamePlacer's, by placer
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_PERSISTENCE_DOMAIN_H_
