// crash_lint.cc -- the flushes of a journal, checked against what they made durable.
#include "sim/pmem/crash_lint.h"

#include <inttypes.h>
#include <stdio.h>

#include <map>

#include "sim/pmem/byte_ranges.h"

namespace rpma_sim {
namespace {

// Per region: the bytes not durable, and the bytes a flush made durable that nothing was
// written to since (and the last such flush).
struct RegionLint {
  ByteRanges not_durable;
  ByteRanges flushed_unwritten;
  uint64_t last_flush = 0;  // the point of the last flush that made some of it durable
};

std::string Finding(uint64_t point, const CrashEvent& event, const std::string& what) {
  return "point " + std::to_string(point) + ": " + event.Describe() + ": " + what;
}

}  // namespace

std::vector<std::string> LintCrashJournal(const CrashJournal& journal) {
  std::vector<std::string> findings;
  std::map<uint32_t, RegionLint> regions;
  for (const CrashEvent& event : journal.events) {
    RegionLint& region = regions[event.range.key];
    const uint64_t begin = event.range.begin, end = event.range.end;
    if (event.kind == CrashEventKind::kPlacement) {
      // A send's bytes in a receive buffer are a message, not data to make durable (the
      // persistence report leaves them out too); a write over them makes them data.
      if (!event.placement.receive()) region.not_durable.Add(begin, end);
      region.flushed_unwritten.Remove(begin, end);
      continue;
    }
    for (const CrashSpan& span : event.made_durable)
      regions[span.key].not_durable.Remove(span.begin, span.end);
    if (event.kind != CrashEventKind::kFlush) continue;
    const bool durable_kind = event.persistent || journal.eadr;
    if (event.persistent && !journal.persistent_memory) {
      findings.push_back(
          Finding(event.point, event, "a PERSISTENT flush on DRAM, where nothing can be durable"));
    } else if (event.persistent && journal.eadr) {
      findings.push_back(Finding(event.point, event,
                                 "a PERSISTENT flush where a VISIBILITY flush would do (eADR: "
                                 "visible is durable)"));
    }
    if (!event.persistent && journal.persistent_memory && !journal.eadr &&
        region.not_durable.Touches(begin, end)) {
      findings.push_back(Finding(event.point, event,
                                 "a VISIBILITY flush over bytes not durable: they stay so, and a "
                                 "power failure loses them (PERSISTENT was needed)"));
    }
    if (durable_kind && journal.persistent_memory && event.made_durable.empty() &&
        event.durable_values.empty()) {
      // An empty flush is covered by anything, and never a second flush of anything.
      if (begin < end && region.last_flush != 0 && region.flushed_unwritten.Covers(begin, end))
        findings.push_back(Finding(event.point, event,
                                   "flushed twice with no write between (point " +
                                       std::to_string(region.last_flush) +
                                       " made it durable): this flush does nothing"));
      else
        findings.push_back(Finding(event.point, event, "a flush that made nothing durable"));
    }
    if (durable_kind && journal.persistent_memory) {
      region.flushed_unwritten.Add(begin, end);
      region.last_flush = event.point;
    }
  }
  if (!journal.persistent_memory) return findings;  // on DRAM nothing is ever durable
  for (const auto& entry : regions) {
    for (const auto& range : entry.second.not_durable.ranges()) {
      char text[192];
      snprintf(text, sizeof(text),
               "%" PRIu64 " bytes at offset %" PRIu64 " of region 0x%" PRIx32
               " were written and never made durable",
               range.second - range.first, range.first, entry.first);
      findings.push_back(text);
    }
  }
  return findings;
}

}  // namespace rpma_sim
