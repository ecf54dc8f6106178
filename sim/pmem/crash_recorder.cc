// crash_recorder.cc -- a node's crash points, as the node executes them.
#include "sim/pmem/crash_recorder.h"

#include "sim/common/guarded_copy.h"
#include "sim/common/log.h"
#include "sim/common/trace.h"
#include "sim/pmem/persistence_domain.h"

namespace rpma_sim {
namespace {

// With RPMA_SIM_TRACE, the point as an instant of the process's track.
void Trace(const CrashEvent& event) {
  if (!trace::On()) return;
  trace::Instant(trace::kProcessTrack, "crash", "crash point " + std::to_string(event.point),
                 "\"event\":" + trace::Quote(event.Describe()));
}

}  // namespace

CrashRecorder::CrashRecorder(uint64_t node, const DeviceCaps& caps, uint64_t first_point,
                             FileOfMemory file_of,
                             const std::unordered_map<uint64_t, CrashSide>* sides)
    : file_of_(std::move(file_of)), sides_(sides) {
  journal_.node = node;
  journal_.persistent_memory = caps.persistent_memory;
  journal_.eadr = caps.eadr;
  journal_.flush_scope_qp = caps.flush_scope_qp && !caps.native_flush;
  journal_.first_point = first_point;
}

CrashRecorder::Known& CrashRecorder::Note(const PlacedRegion& region) {
  auto found = known_.find(region.key);
  if (found != known_.end()) return found->second;
  CrashRegion entry;
  entry.key = region.key;
  entry.ordinal = region.ordinal;
  entry.address = reinterpret_cast<uint64_t>(region.base);
  entry.length = region.length;
  if (file_of_) file_of_(region.base, region.length, &entry.file, &entry.file_offset);
  journal_.regions.push_back(std::move(entry));
  Known& known = known_[region.key];
  known.base = region.base;
  known.index = journal_.regions.size() - 1;
  return known;
}

bool CrashRecorder::Keep(uint64_t bytes) {
  kept_bytes_ += bytes;
  if (kept_bytes_ <= CrashJournal::kMaxBytes) return true;
  SIM_LOG_WARNING("crash states: node %llu's journal reached %llu MiB; recorded up to here",
                  static_cast<unsigned long long>(journal_.node),
                  static_cast<unsigned long long>(CrashJournal::kMaxBytes >> 20));
  End("the journal reached its limit of " + std::to_string(CrashJournal::kMaxBytes >> 20) + " MiB");
  journal_.truncated = true;
  return false;
}

void CrashRecorder::Placed(uint64_t point, const PlacedRegion& region, uint64_t offset,
                           uint64_t length, const Placement& placement) {
  if (ended_ || length == 0 || offset > region.length || length > region.length - offset) return;
  // What it overwrites is kept, and a region's final contents too: counted at its first.
  const bool first = known_.count(region.key) == 0;
  if (!Keep(length + (first ? region.length : 0))) return;
  Note(region);
  CrashEvent event;
  event.point = point;
  event.kind = CrashEventKind::kPlacement;
  event.placement = placement;
  event.side = SideOf(placement.placer);
  event.range = CrashSpan{region.key, offset, offset + length};
  event.overwritten = ReadAsDevice(region.base + offset, length);
  Trace(event);
  journal_.events.push_back(std::move(event));
}

void CrashRecorder::Durable(uint64_t point, CrashEventKind kind, FlushKind flush, uint32_t key,
                            uint64_t offset, uint64_t length, const Placement& by,
                            std::vector<CrashSpan> made_durable,
                            std::vector<CrashValue> durable_values) {
  uint64_t size = 64 + made_durable.size() * sizeof(CrashSpan);
  for (const CrashValue& value : durable_values) size += sizeof(CrashValue) + value.bytes.size();
  if (ended_ || !Keep(size)) return;
  CrashEvent event;
  event.point = point;
  event.kind = kind;
  event.persistent = flush == FlushKind::kPersistent;
  event.placement = by;
  event.side = kind == CrashEventKind::kPersist ? CrashSide::kUnknown : SideOf(by.placer);
  event.range = CrashSpan{key, offset, offset + length};
  event.made_durable = std::move(made_durable);
  event.durable_values = std::move(durable_values);
  Trace(event);
  journal_.events.push_back(std::move(event));
}

void CrashRecorder::RegionBefore(const PlacedRegion& region) {
  if (ended_ || known_.count(region.key) != 0 || !Keep(region.length)) return;
  Note(region);
}

CrashSide CrashRecorder::SideOf(uint64_t placer) const {
  auto found = sides_->find(placer);
  return found == sides_->end() ? CrashSide::kUnknown : found->second;
}

void CrashRecorder::TakeFinal(Known* known) {
  if (known->final) return;
  known->final = true;
  CrashRegion& region = journal_.regions[known->index];
  region.final_image = ReadAsDevice(known->base, region.length);
}

void CrashRecorder::RegionGoing(uint32_t key) {
  auto found = known_.find(key);
  if (found != known_.end()) TakeFinal(&found->second);
}

void CrashRecorder::End(const std::string& reason) {
  if (ended_) return;
  ended_ = true;
  journal_.end_reason = reason;
  for (auto& entry : known_) TakeFinal(&entry.second);
}

CrashJournal CrashRecorder::Finish() {
  End("the recording was stopped");
  return std::move(journal_);
}

}  // namespace rpma_sim
