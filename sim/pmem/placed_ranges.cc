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
  auto next = ranges_.lower_bound(begin);
  while (next != ranges_.end() && next->first < end) next = Erase(next);
  auto placed = Insert(next, begin, Range{end, placement});

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
      SetPlacement(prev, placed->second.placement);
      Erase(placed);
      placed = prev;
    } else {
      newly_placed(placed->second.end, next->first);
      placed->second.end = next->second.end;
      Erase(next);
    }
  }
}

uint64_t PlacedRanges::MakeDurable(uint64_t begin, uint64_t end, const Span* made_durable) {
  if (begin >= end || ranges_.empty()) return 0;
  SplitAt(begin);
  SplitAt(end);
  uint64_t bytes = 0;
  for (auto it = ranges_.lower_bound(begin); it != ranges_.end() && it->first < end;) {
    bytes += it->second.end - it->first;
    if (made_durable) (*made_durable)(it->first, it->second.end);
    it = Erase(it);
  }
  return bytes;
}

uint64_t PlacedRanges::MakeDurableOf(uint64_t placer, const Span* made_durable) {
  auto found = begins_of_placer_.find(placer);
  if (placer == 0 || found == begins_of_placer_.end()) return 0;
  std::set<uint64_t> begins = std::move(found->second);
  begins_of_placer_.erase(found);
  uint64_t bytes = 0;
  for (uint64_t begin : begins) {
    auto it = ranges_.find(begin);
    bytes += it->second.end - it->first;
    if (made_durable) (*made_durable)(it->first, it->second.end);
    ranges_.erase(it);
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
  auto found = begins_of_placer_.find(placer);
  if (placer == 0 || found == begins_of_placer_.end()) return;
  for (uint64_t begin : found->second) ranges_.at(begin).placement.placer = 0;
  begins_of_placer_.erase(found);
}

void PlacedRanges::SplitAt(uint64_t at) {
  auto after = ranges_.upper_bound(at);
  if (after == ranges_.begin()) return;
  auto holder = std::prev(after);
  if (holder->first < at && holder->second.end > at) {
    Range tail{holder->second.end, holder->second.placement};
    holder->second.end = at;
    Insert(after, at, tail);
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
  Erase(right);
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

PlacedRanges::Iterator PlacedRanges::Insert(Iterator hint, uint64_t begin, const Range& range) {
  Index(range.placement.placer, begin);
  return ranges_.emplace_hint(hint, begin, range);
}

PlacedRanges::Iterator PlacedRanges::Erase(Iterator it) {
  Unindex(it->second.placement.placer, it->first);
  return ranges_.erase(it);
}

void PlacedRanges::SetPlacement(Iterator it, const Placement& placement) {
  Unindex(it->second.placement.placer, it->first);
  it->second.placement = placement;
  Index(placement.placer, it->first);
}

void PlacedRanges::Index(uint64_t placer, uint64_t begin) {
  if (placer != 0) begins_of_placer_[placer].insert(begin);
}

void PlacedRanges::Unindex(uint64_t placer, uint64_t begin) {
  if (placer == 0) return;
  auto found = begins_of_placer_.find(placer);
  if (found == begins_of_placer_.end()) return;
  found->second.erase(begin);
  if (found->second.empty()) begins_of_placer_.erase(found);
}

}  // namespace rpma_sim
