// placed_ranges.cc -- the interval map of placed, not yet durable bytes of a region.
#include "sim/pmem/placed_ranges.h"

#include <algorithm>
#include <iterator>

namespace rpma_sim {

bool PlacedRanges::PlaceAgain(uint64_t begin, uint64_t end, const Placement& placement) {
  auto after = ranges_.upper_bound(begin);
  if (after == ranges_.begin()) return false;
  auto holder = std::prev(after);
  Placement& held = holder->second.placement;
  if (holder->second.end < end || !held.MergesWith(placement)) return false;
  held.first = std::min(held.first, placement.first);
  held.last = std::max(held.last, placement.last);
  return true;
}

void PlacedRanges::PlaceNew(uint64_t begin, uint64_t end, const Placement& placement,
                            const Span& newly_placed) {
  auto after = ranges_.upper_bound(begin);

  // Report the parts of [begin, end) that no range covers: they were durable until now.
  uint64_t cursor = begin;
  auto it = after;
  if (it != ranges_.begin() && std::prev(it)->second.end > begin) it = std::prev(it);
  for (; it != ranges_.end() && it->first < end; ++it) {
    if (it->first > cursor) newly_placed(cursor, it->first);
    cursor = std::max(cursor, it->second.end);
  }
  if (cursor < end) newly_placed(cursor, end);

  SplitAt(begin);
  SplitAt(end);
  ranges_.erase(ranges_.lower_bound(begin), ranges_.lower_bound(end));
  auto placed = ranges_.emplace(begin, Range{end, placement}).first;

  placed = Coalesce(placed);
  // Bounded: past the limit, the new range swallows the gap to its nearest neighbour and
  // that neighbour, until the limit holds again. The gap's bytes were durable: they count as
  // placed (their pre-image saved, so a power failure puts back what they hold now); the
  // neighbour's bytes are blamed on the newer placement.
  while (ranges_.size() > kMaxRanges) {
    auto next = std::next(placed);
    bool has_prev = placed != ranges_.begin();
    uint64_t gap_before = has_prev ? placed->first - std::prev(placed)->second.end : UINT64_MAX;
    uint64_t gap_after = next != ranges_.end() ? next->first - placed->second.end : UINT64_MAX;
    if (has_prev && gap_before <= gap_after) {
      auto prev = std::prev(placed);
      newly_placed(prev->second.end, placed->first);
      prev->second.end = placed->second.end;
      prev->second.placement = placed->second.placement;
      ranges_.erase(placed);
      placed = prev;
    } else {
      newly_placed(placed->second.end, next->first);
      placed->second.end = next->second.end;
      ranges_.erase(next);
    }
  }
}

uint64_t PlacedRanges::MakeDurable(uint64_t begin, uint64_t end) {
  if (begin >= end || ranges_.empty()) return 0;
  SplitAt(begin);
  SplitAt(end);
  uint64_t bytes = 0;
  auto first = ranges_.lower_bound(begin);
  auto last = first;
  for (; last != ranges_.end() && last->first < end; ++last) bytes += last->second.end - last->first;
  ranges_.erase(first, last);
  return bytes;
}

uint64_t PlacedRanges::MakeDurableOf(uint64_t placer) {
  uint64_t bytes = 0;
  for (auto it = ranges_.begin(); it != ranges_.end();) {
    if (it->second.placement.placer == placer) {
      bytes += it->second.end - it->first;
      it = ranges_.erase(it);
    } else {
      ++it;
    }
  }
  return bytes;
}

void PlacedRanges::MarkVisibilityFlushed(uint64_t begin, uint64_t end) {
  // Only the report's wording depends on it: at the limit, not worth two more ranges.
  if (begin >= end || ranges_.empty() || ranges_.size() + 2 > kMaxRanges) return;
  SplitAt(begin);
  SplitAt(end);
  for (auto it = ranges_.lower_bound(begin); it != ranges_.end() && it->first < end; ++it)
    it->second.placement.visibility_flushed = true;
}

void PlacedRanges::Disown(uint64_t placer) {
  for (auto& entry : ranges_)
    if (entry.second.placement.placer == placer) entry.second.placement.placer = 0;
}

void PlacedRanges::SplitAt(uint64_t at) {
  auto after = ranges_.upper_bound(at);
  if (after == ranges_.begin()) return;
  auto holder = std::prev(after);
  if (holder->first < at && holder->second.end > at) {
    Range tail{holder->second.end, holder->second.placement};
    holder->second.end = at;
    ranges_.emplace_hint(after, at, tail);
  }
}

bool PlacedRanges::MergeWithNext(std::map<uint64_t, Range>::iterator left) {
  auto right = std::next(left);
  if (right == ranges_.end() || left->second.end != right->first ||
      !left->second.placement.MergesWith(right->second.placement))
    return false;
  Placement& merged = left->second.placement;
  merged.first = std::min(merged.first, right->second.placement.first);
  merged.last = std::max(merged.last, right->second.placement.last);
  left->second.end = right->second.end;
  ranges_.erase(right);
  return true;
}

std::map<uint64_t, PlacedRanges::Range>::iterator PlacedRanges::Coalesce(
    std::map<uint64_t, Range>::iterator it) {
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (MergeWithNext(prev)) it = prev;  // `it` is gone, merged into prev
  }
  MergeWithNext(it);
  return it;
}

}  // namespace rpma_sim
