// persistence_domain.cc -- placing, flushing, reporting and reverting a node's memory.
#include "sim/pmem/persistence_domain.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include <algorithm>
#include <set>
#include <vector>

#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/common/seeded_draw.h"
#include "sim/common/trace.h"

namespace rpma_sim {
namespace {

// Every domain of the process, for ArmAll and ReportAll.
struct Registry {
  Mutex mutex;
  std::set<PersistenceDomain*> domains GUARDED_BY(mutex);
  bool arm_new GUARDED_BY(mutex) = false;
};

Registry& Domains() {
  static PerProcess<Registry> registry;  // a fork child's domains are its own
  return registry.Get();
}

// The report names at most this many ranges per heading; the rest are counted.
constexpr size_t kReportLines = 16;

}  // namespace

const char* LossModeName(LossMode mode) {
  switch (mode) {
    case LossMode::kAll:
      return "all";
    case LossMode::kWords:
      return "words";
    case LossMode::kLines:
      return "lines";
    case LossMode::kNone:
      return "none";
  }
  return "?";
}

PersistenceDomain::PersistenceDomain(const DeviceCaps& caps)
    : caps_(caps), report_(caps.persistent_memory && PersistenceReportEnabled()) {
  Registry& registry = Domains();
  MutexLock lock(&registry.mutex);
  registry.domains.insert(this);
  if (registry.arm_new) armed_.store(true, std::memory_order_relaxed);
}

PersistenceDomain::~PersistenceDomain() {
  Registry& registry = Domains();
  MutexLock lock(&registry.mutex);
  registry.domains.erase(this);
}

void PersistenceDomain::Arm() {
  MutexLock lock(&mutex_);
  if (armed()) return;
  armed_.store(true, std::memory_order_relaxed);
  // What was placed before has no earlier value kept: it keeps the one it has now.
  for (auto& entry : regions_) {
    RegionState& state = entry.second;
    for (const auto& range : state.placed.ranges())
      state.pre_images.Save(state.base, range.first, range.second.end);
  }
}

void PersistenceDomain::ArmAll() {
  Registry& registry = Domains();
  MutexLock lock(&registry.mutex);
  registry.arm_new = true;
  for (PersistenceDomain* domain : registry.domains) domain->Arm();
}

void PersistenceDomain::StopArmingNew() {
  Registry& registry = Domains();
  MutexLock lock(&registry.mutex);
  registry.arm_new = false;
}

void PersistenceDomain::PlaceTracked(const PlacedRegion& region, uint64_t offset, uint64_t length,
                                     const Placement& placement) {
  MutexLock lock(&mutex_);
  if (last_key_ != region.key || last_state_ == nullptr) {
    last_state_ = &regions_[region.key];  // unordered_map: the element stays where it is
    last_key_ = region.key;
  }
  RegionState& state = *last_state_;
  if (state.base == nullptr) NoteAliasesLocked(region);  // the region's first placement
  state.base = region.base;
  state.length = region.length;
  state.ordinal = region.ordinal;
  const uint64_t point = points_.load(std::memory_order_relaxed) + 1;
  points_.store(point, std::memory_order_release);
  if (recorder_) recorder_->Placed(point, region, offset, length, placement);
  const bool save = armed();
  if (save && flushes_connection()) {
    const uintptr_t first = reinterpret_cast<uintptr_t>(region.base) + offset;
    KeepSupersededLocked(first, first + length, placement.placer);
  }
  state.placed.Place(offset, offset + length, placement, [&](uint64_t begin, uint64_t end) {
    if (!save) return;
    mutex_.AssertHeld();  // called by Place, within this function's lock
    state.pre_images.Save(state.base, begin, end);
    if (aliased_) AdoptPreImagesLocked(region.key, &state, begin, end);
  });
  if (aliased_) {
    const uintptr_t first = reinterpret_cast<uintptr_t>(region.base) + offset;
    HandOverLocked(region.key, first, first + length);
  }
}

void PersistenceDomain::NoteAliasesLocked(const PlacedRegion& region) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(region.base);
  ForEachRegionWithinLocked(base, base + region.length,
                            [&](uint32_t other, RegionState&, uint64_t, uint64_t) {
                              mutex_.AssertHeld();  // called within this lock
                              if (other != region.key) aliased_ = true;
                            });
}

void PersistenceDomain::HandOverLocked(uint32_t key, uintptr_t first, uintptr_t last) {
  ForEachRegionWithinLocked(
      first, last, [&](uint32_t other, RegionState& state, uint64_t begin, uint64_t end) {
        mutex_.AssertHeld();  // called by ForEachRegionWithinLocked, within this lock
        if (other == key) return;
        state.placed.MakeDurable(begin, end);  // not durable: placed in `key` only, from now
        DropPreImagesIfDurableLocked(&state);
      });
}

void PersistenceDomain::Flush(const PlacedRegion& region, uint64_t offset, uint64_t length,
                              FlushKind flush, uint64_t placer, uint64_t ordinal) {
  const bool persistent = flush == FlushKind::kPersistent;
  if (!tracking()) return;
  MutexLock lock(&mutex_);
  bool durable = caps_.persistent_memory && (persistent || caps_.eadr);
  std::vector<CrashSpan> made;     // what it makes durable, for a recording
  std::vector<CrashValue> values;  // and older values it makes durable
  // A flush drains bytes, not a key: every registration of the flushed bytes (the same
  // memory may be registered twice, as a whole and a part) has them flushed.
  const uintptr_t first =
      reinterpret_cast<uintptr_t>(region.base) + std::min(offset, region.length);
  const uintptr_t last = first + std::min(length, region.length - std::min(offset, region.length));
  ForEachRegionWithinLocked(
      first, last, [&](uint32_t key, RegionState& state, uint64_t begin, uint64_t end) {
        mutex_.AssertHeld();  // called by ForEachRegionWithinLocked, within this lock
        if (durable) {
          PlacedRanges::Span span = DurableSpanLocked(key, state, &made);
          state.placed.MakeDurable(begin, end, &span);
        } else if (!persistent) {
          state.placed.MarkVisibilityFlushed(begin, end);
        }
        DropPreImagesIfDurableLocked(&state);
      });
  if (durable && flushes_connection()) {
    // The read that is librpma's portable flush drains every earlier write of its queue
    // pair, whatever region those went to, and what others wrote over since.
    DrainSupersededLocked(placer, recorder_ ? &values : nullptr);
    for (auto& entry : regions_) {
      PlacedRanges::Span span = DurableSpanLocked(entry.first, entry.second, &made);
      entry.second.placed.MakeDurableOf(placer, &span);
      DropPreImagesIfDurableLocked(&entry.second);
    }
  }
  NoteDurableLocked(CrashEventKind::kFlush, flush, region, offset, length,
                    Placement{placer, ordinal, ordinal, PlacedBy::kWrite}, std::move(made),
                    std::move(values));
}

template <typename Visit>
void PersistenceDomain::ForEachRegionWithinLocked(uintptr_t first, uintptr_t last, Visit&& visit) {
  for (auto& entry : regions_) {
    RegionState& state = entry.second;
    const uintptr_t base = reinterpret_cast<uintptr_t>(state.base);
    const uintptr_t begin = std::max(first, base);
    const uintptr_t end = std::min(last, base + state.length);
    if (begin < end) visit(entry.first, state, begin - base, end - base);
  }
}

PlacedRanges::Span PersistenceDomain::DurableSpanLocked(uint32_t key, const RegionState& state,
                                                        std::vector<CrashSpan>* made) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(state.base);
  const bool note = recorder_ != nullptr;
  return [this, key, base, made, note](uint64_t begin, uint64_t end) {
    mutex_.AssertHeld();  // a span is called within the lock that made it
    superseded_.Cut(base + begin, base + end);
    if (note) made->push_back(CrashSpan{key, begin, end});
  };
}

void PersistenceDomain::KeepSupersededLocked(uintptr_t first, uintptr_t last, uint64_t placer) {
  ForEachRegionWithinLocked(
      first, last, [&](uint32_t, RegionState& state, uint64_t begin, uint64_t end) {
        mutex_.AssertHeld();  // called by ForEachRegionWithinLocked, within this lock
        const uintptr_t base = reinterpret_cast<uintptr_t>(state.base);
        state.placed.ForEachWithin(begin, end, [&](uint64_t from, uint64_t to, const Placement& p) {
          mutex_.AssertHeld();
          if (p.placer != 0 && p.placer != placer)
            superseded_.Keep(p.placer, base + from, to - from);
        });
      });
}

void PersistenceDomain::DrainSupersededLocked(uint64_t placer, std::vector<CrashValue>* values) {
  superseded_.TakeOf(placer, [&](uintptr_t address, const uint8_t* value, uint64_t length) {
    mutex_.AssertHeld();  // called by TakeOf, within this lock
    ForEachRegionWithinLocked(
        address, address + length,
        [&](uint32_t key, RegionState& state, uint64_t begin, uint64_t end) {
          const uintptr_t base = reinterpret_cast<uintptr_t>(state.base);
          state.placed.ForEachWithin(begin, end, [&](uint64_t from, uint64_t to, const Placement&) {
            const uint8_t* bytes = value + (base + from - address);
            state.pre_images.SaveValue(from, bytes, to - from);
            if (values != nullptr)
              values->push_back(
                  CrashValue{key, from, std::vector<uint8_t>(bytes, bytes + to - from)});
          });
        });
  });
}

void PersistenceDomain::NoteDurableLocked(CrashEventKind kind, FlushKind flush,
                                          const PlacedRegion& region, uint64_t offset,
                                          uint64_t length, const Placement& by,
                                          std::vector<CrashSpan> made_durable,
                                          std::vector<CrashValue> durable_values) {
  const uint64_t point = points_.load(std::memory_order_relaxed) + 1;
  points_.store(point, std::memory_order_release);
  // The range as it falls in the region: a flush's length may run past it (librpma's
  // portable flush ignores it), even past the end of the address space.
  const uint64_t begin = std::min(offset, region.length);
  const uint64_t within = std::min(length, region.length - begin);
  if (recorder_)
    recorder_->Durable(point, kind, flush, region.key, begin, within, by, std::move(made_durable),
                       std::move(durable_values));
}

void PersistenceDomain::Persist(const PlacedRegion& region, uint64_t offset, uint64_t length) {
  if (!tracking()) return;
  MutexLock lock(&mutex_);
  std::vector<CrashSpan> made;
  auto found = regions_.find(region.key);
  if (found != regions_.end() && caps_.persistent_memory) {
    PlacedRanges::Span span = DurableSpanLocked(region.key, found->second, &made);
    found->second.placed.MakeDurable(offset, offset + length, &span);
    DropPreImagesIfDurableLocked(&found->second);
  }
  NoteDurableLocked(CrashEventKind::kPersist, FlushKind::kPersistent, region, offset, length,
                    Placement{}, std::move(made));
}

void PersistenceDomain::StartRecording(uint64_t node, FileOfMemory file_of) {
  Arm();  // the pre-images a power failure needs, and no direct placements (direct_target.h)
  MutexLock lock(&mutex_);
  if (recorder_) return;
  recorder_.reset(new CrashRecorder(node, caps_, points_.load() + 1, std::move(file_of), &sides_));
  for (const auto& entry : regions_) {
    const RegionState& state = entry.second;
    recorder_->RegionBefore(PlacedRegion{entry.first, state.base, state.length, state.ordinal});
  }
}

bool PersistenceDomain::recording() {
  MutexLock lock(&mutex_);
  return recorder_ != nullptr;
}

CrashJournal PersistenceDomain::StopRecording() {
  MutexLock lock(&mutex_);
  if (!recorder_) return CrashJournal();
  CrashJournal journal = recorder_->Finish();
  recorder_.reset();
  return journal;
}

void PersistenceDomain::DropPreImagesIfDurableLocked(RegionState* state) {
  if (state->placed.empty()) state->pre_images.Clear();
}

void PersistenceDomain::AdoptPreImagesLocked(uint32_t key, RegionState* mine, uint64_t begin,
                                             uint64_t end) {
  const uintptr_t base = reinterpret_cast<uintptr_t>(mine->base);
  ForEachRegionWithinLocked(
      base + begin, base + end,
      [&](uint32_t other_key, RegionState& other, uint64_t other_begin, uint64_t other_end) {
        if (other_key == key) return;
        const uintptr_t other_base = reinterpret_cast<uintptr_t>(other.base);
        // Its placed ranges within the bytes, in its offsets.
        other.placed.ForEachWithin(other_begin, other_end,
                                   [&](uint64_t from, uint64_t to, const Placement&) {
                                     mine->pre_images.SaveFrom(other.pre_images, from,
                                                               other_base + from - base, to - from);
                                   });
      });
}

std::string PersistenceDomain::RemedyLocked() const {
  std::string remedy =
      caps_.eadr ? "a completed flush (RPMA_FLUSH_TYPE_VISIBILITY or _PERSISTENT) of the range"
                 : "a completed RPMA_FLUSH_TYPE_PERSISTENT flush of the range";
  if (flushes_connection()) remedy += " (or of any range, on the same connection, after it)";
  return remedy + " or rpma_sim_persist() by the target";
}

// A report's line, formatted.
std::string Formatted(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Formatted(const char* format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  return line;
}

void LogReport(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) SIM_LOG_WARNING("%s", line.c_str());
}

template <typename Select>
size_t PersistenceDomain::ReportLocked(const char* heading, Select select, uint64_t placer,
                                       std::vector<std::string>* report) {
  struct Line {
    uint32_t key;
    const RegionState* state;
    uint64_t begin;
    const PlacedRanges::Range* range;
  };
  std::vector<Line> lines;
  size_t count = 0;
  uint64_t bytes = 0;
  for (const auto& entry : regions_) {
    auto consider = [&](uint64_t begin, const PlacedRanges::Range& range) {
      const Placement& placement = range.placement;
      if (placement.receive() || !select(entry.first, placement)) return;
      ++count;
      bytes += range.end - begin;
      if (lines.size() < kReportLines)
        lines.push_back(Line{entry.first, &entry.second, begin, &range});
    };
    if (placer != 0) {
      entry.second.placed.ForEachOf(placer, consider);
    } else {
      for (const auto& range : entry.second.placed.ranges()) consider(range.first, range.second);
    }
  }
  if (count == 0) return 0;
  report->push_back(Formatted("persistence: %s: %" PRIu64 " bytes in %zu range%s placed and never "
                              "made durable",
                              heading, bytes, count, count == 1 ? "" : "s"));
  for (const Line& line : lines) {
    const Placement& placement = line.range->placement;
    report->push_back(Formatted(
        "persistence:   region rkey 0x%" PRIx32 " at %p (%" PRIu64 " bytes): offset %" PRIu64
        ", %" PRIu64 " bytes, placed by work request %" PRIu64
        "%s%s; %s would have made it "
        "durable%s",
        line.key, static_cast<void*>(line.state->base), line.state->length, line.begin,
        line.range->end - line.begin, placement.first,
        placement.last != placement.first ? (" to " + std::to_string(placement.last)).c_str() : "",
        placement.placer == 0 ? " of a connection that has ended" : "", RemedyLocked().c_str(),
        placement.visibility_flushed && !caps_.eadr
            ? " (its RPMA_FLUSH_TYPE_VISIBILITY flush does not make it durable)"
            : ""));
  }
  if (count > lines.size())
    report->push_back(Formatted("persistence:   ... and %zu more ranges", count - lines.size()));
  return count;
}

void PersistenceDomain::NamePlacer(uint64_t placer, bool server) {
  MutexLock lock(&mutex_);
  sides_[placer] = server ? CrashSide::kServer : CrashSide::kClient;
}

void PersistenceDomain::EndPlacer(uint64_t placer, const std::string& connection) {
  if (placer == 0) return;          // 0 is nobody: no connection places as it
  std::vector<std::string> report;  // logged after the lock (a system call)
  {
    MutexLock lock(&mutex_);
    sides_.erase(placer);
    if (!tracking()) return;
    if (report_) {
      std::string heading = connection + " ended";
      ReportLocked(
          heading.c_str(), [](uint32_t, const Placement&) { return true; }, placer, &report);
    }
    for (auto& entry : regions_) entry.second.placed.Disown(placer);
    superseded_.DropOf(placer);
  }
  LogReport(report);
}

size_t PersistenceDomain::Report(std::vector<std::string>* report) {
  if (!caps_.persistent_memory) return 0;  // on DRAM nothing can be made durable
  MutexLock lock(&mutex_);
  return ReportLocked(
      "report", [](uint32_t, const Placement&) { return true; }, 0, report);
}

size_t PersistenceDomain::Report() {
  std::vector<std::string> report;
  size_t count = Report(&report);
  LogReport(report);
  return count;
}

size_t PersistenceDomain::ReportAll() {
  std::vector<std::string> report;
  size_t count = 0;
  {
    Registry& registry = Domains();
    MutexLock lock(&registry.mutex);
    for (PersistenceDomain* domain : registry.domains) count += domain->Report(&report);
  }
  LogReport(report);
  return count;
}

void PersistenceDomain::ForgetRegion(uint32_t key) {
  std::vector<std::string> report;  // logged after the lock (a system call)
  {
    MutexLock lock(&mutex_);
    if (recorder_) recorder_->RegionGoing(key);
    auto found = regions_.find(key);
    if (found == regions_.end()) return;
    if (last_key_ == key) last_state_ = nullptr;
    if (report_) {
      // What a connection still open placed there: its own report would no longer find it.
      ReportLocked(
          "a region deregistered",
          [key](uint32_t region, const Placement& p) { return region == key && p.placer != 0; }, 0,
          &report);
    }
    // Its bytes leave the model: what another connection's flush would have made durable
    // there no longer counts.
    const uintptr_t base = reinterpret_cast<uintptr_t>(found->second.base);
    superseded_.Cut(base, base + found->second.length);
    regions_.erase(found);
  }
  LogReport(report);
}

uint64_t PersistenceDomain::PowerFail(LossMode mode, uint64_t seed, const TornKeep* keep) {
  uint64_t placed = 0;
  uint64_t reverted = 0;
  {
    MutexLock lock(&mutex_);
    PowerFailLocked(mode, seed, keep, &placed, &reverted);
  }
  SIM_LOG_NOTICE("persistence: power failure (loss=%s): %" PRIu64
                 " bytes were not durable, %" PRIu64 " reverted",
                 LossModeName(mode), placed, reverted);
  if (trace::On()) {
    trace::Instant(trace::kProcessTrack, "power", "power failure",
                   std::string("\"loss\":\"") + LossModeName(mode) + "\",\"bytes_not_durable\":" +
                       std::to_string(placed) + ",\"bytes_reverted\":" + std::to_string(reverted));
  }
  return reverted;
}

void PersistenceDomain::PowerFailLocked(LossMode mode, uint64_t seed, const TornKeep* keep,
                                        uint64_t* placed, uint64_t* reverted) {
  ++failures_;
  // A recording ends here: what comes after does not follow from its points.
  if (recorder_)
    recorder_->End("a power failure just before crash point " + std::to_string(points() + 1));
  const uint64_t unit = mode == LossMode::kWords ? 8 : 64;
  for (auto& entry : regions_) {
    RegionState& state = entry.second;
    const uintptr_t base = reinterpret_cast<uintptr_t>(state.base);
    const uintptr_t aligned_base = base & ~(unit - 1);
    // The one unit that survives, if the failure names it.
    const uintptr_t kept = keep != nullptr && keep->ordinal == state.ordinal
                               ? (base + keep->offset) & ~(unit - 1)
                               : UINTPTR_MAX;
    for (const auto& range : state.placed.ranges()) {
      uint64_t begin = range.first;
      uint64_t end = range.second.end;
      *placed += end - begin;
      if (mode == LossMode::kNone || !armed()) continue;
      if (mode == LossMode::kAll) {
        state.pre_images.Restore(state.base, begin, end);
        *reverted += end - begin;
        continue;
      }
      // Torn: each word or line (as the CPU aligns them) of the range reverts or not, drawn
      // for the region by its ordinal (the same in every run, unlike its key).
      for (uintptr_t at = (base + begin) & ~(unit - 1); at < base + end; at += unit) {
        const bool survives =
            keep != nullptr
                ? at == kept
                : (Draw(seed, failures_, state.ordinal, (at - aligned_base) / unit) & 1) == 0;
        if (survives) continue;
        // The unit's part inside the range (a unit may start before the region does).
        uint64_t from = std::max<uint64_t>(at, base + begin) - base;
        uint64_t to = std::min<uint64_t>(at + unit, base + end) - base;
        state.pre_images.Restore(state.base, from, to);
        *reverted += to - from;
      }
    }
    state.placed.Clear();
    state.pre_images.Clear();
  }
  superseded_.Clear();
}

}  // namespace rpma_sim
