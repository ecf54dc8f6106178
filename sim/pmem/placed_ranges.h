// placed_ranges.h -- the bytes of one registered region that remote operations placed and
// nothing has made durable yet.
//
// Disjoint ranges of offsets in the region, each with the placement that put it there: which
// connection (its placer id), which of its work requests (ordinals, first to last), whether
// it landed in a receive buffer, whether a VISIBILITY flush has covered it since. A later
// placement over the same bytes takes them over (the last writer is the one to blame).
// Neighbouring ranges of one placement merge, so a region written in order, or the same
// bytes written again and again, stays one range. Not thread-safe: the persistence domain
// that owns it locks.
#ifndef RPMA_SIM_PMEM_PLACED_RANGES_H_
#define RPMA_SIM_PMEM_PLACED_RANGES_H_

#include <stddef.h>
#include <stdint.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace rpma_sim {

// The operation that placed remote bytes.
enum class PlacedBy : uint8_t { kWrite, kWriteWithImm, kAtomicWrite, kSend, kSendWithImm };

// What a flush asks for (librpma's RPMA_FLUSH_TYPE_PERSISTENT or _VISIBILITY); the
// values travel in REQUEST frames.
enum class FlushKind { kPersistent, kVisibility };

struct Placement {
  uint64_t placer = 0;  // the connection's queue pair (PlacerId); 0 once that has ended
  uint64_t first = 0;   // ordinals of the work requests that placed it (1-based)
  uint64_t last = 0;
  PlacedBy by = PlacedBy::kWrite;   // (of the last one to place it, where several did)
  bool visibility_flushed = false;  // a VISIBILITY flush covered it (not durable by itself)

  // A send's bytes in a receive buffer.
  bool receive() const { return by == PlacedBy::kSend || by == PlacedBy::kSendWithImm; }

  // Whether two ranges with these placements, side by side, may be one.
  bool MergesWith(const Placement& other) const {
    return placer == other.placer && receive() == other.receive() &&
           visibility_flushed == other.visibility_flushed;
  }
};

class PlacedRanges {
 public:
  struct Range {
    uint64_t end;
    Placement placement;
  };
  using Span = std::function<void(uint64_t begin, uint64_t end)>;

  // At most this many ranges per region: past it, a new range swallows the gap to its
  // nearest neighbour and the neighbour (the gap's bytes count as placed, their pre-image
  // saved like the rest; the neighbour's are blamed on the newer placement). Making the
  // middle of a range durable splits it, so each such flush may add one more.
  static constexpr size_t kMaxRanges = 1 << 16;

  // Records [begin, end) as placed by `placement`. `newly_placed(begin, end)` is called
  // first for each part that was durable until now (so its pre-image can be saved).
  template <typename NewlyPlaced>
  void Place(uint64_t begin, uint64_t end, const Placement& placement, NewlyPlaced&& newly_placed) {
    if (begin >= end || PlaceAgain(begin, end, placement)) return;
    PlaceNew(begin, end, placement, Span(std::forward<NewlyPlaced>(newly_placed)));
  }

  // Makes [begin, end) durable; returns how many bytes were placed there. `made_durable`,
  // if not null, is told each range that was placed and is durable now.
  uint64_t MakeDurable(uint64_t begin, uint64_t end, const Span* made_durable = nullptr);
  // Makes every range of `placer` durable; returns the bytes (each told as above).
  uint64_t MakeDurableOf(uint64_t placer, const Span* made_durable = nullptr);
  // Notes that a VISIBILITY flush covered the placed bytes of [begin, end).
  void MarkVisibilityFlushed(uint64_t begin, uint64_t end);
  // `placer` has ended: its ranges stay placed, owned by nobody (0).
  void Disown(uint64_t placer);

  bool empty() const { return ranges_.empty(); }
  size_t size() const { return ranges_.size(); }
  void Clear() {
    ranges_.clear();
    begins_of_placer_.clear();
  }
  const std::map<uint64_t, Range>& ranges() const { return ranges_; }  // by begin
  // Calls `visit(from, to, placement)` for the placed part of each range within [begin, end),
  // in order.
  template <typename Visit>
  void ForEachWithin(uint64_t begin, uint64_t end, Visit&& visit) const {
    auto range = ranges_.upper_bound(begin);
    if (range != ranges_.begin()) --range;
    for (; range != ranges_.end() && range->first < end; ++range) {
      const uint64_t from = std::max(range->first, begin);
      const uint64_t to = std::min(range->second.end, end);
      if (from < to) visit(from, to, range->second.placement);
    }
  }
  // Calls `visit(begin, range)` for each range of `placer` (not 0), in order: as many steps
  // as it has ranges, however many others hold.
  template <typename Visit>
  void ForEachOf(uint64_t placer, Visit&& visit) const {
    auto found = begins_of_placer_.find(placer);
    if (found == begins_of_placer_.end()) return;
    for (uint64_t begin : found->second) visit(begin, ranges_.at(begin));
  }

 private:
  // The common case, cheap: the same bytes (or bytes inside them) placed again by the same
  // connection; nothing was durable, nothing moves. False if it is not that case.
  bool PlaceAgain(uint64_t begin, uint64_t end, const Placement& placement);
  void PlaceNew(uint64_t begin, uint64_t end, const Placement& placement, const Span& newly_placed);
  // Splits the range containing `at` (if any starts before it) so that one starts there.
  void SplitAt(uint64_t at);
  // Merges `left` with the range right after it if they touch and match; true if it did.
  bool MergeWithNext(std::map<uint64_t, Range>::iterator left);
  // Merges the range at `it` with its neighbours where they touch and match; returns the
  // range that holds it now.
  std::map<uint64_t, Range>::iterator Coalesce(std::map<uint64_t, Range>::iterator it);

  // Every change of ranges_ goes through these, which keep begins_of_placer_ with it.
  using Iterator = std::map<uint64_t, Range>::iterator;
  Iterator Insert(Iterator hint, uint64_t begin, const Range& range);
  Iterator Erase(Iterator it);
  void SetPlacement(Iterator it, const Placement& placement);
  void Index(uint64_t placer, uint64_t begin);
  void Unindex(uint64_t placer, uint64_t begin);

  std::map<uint64_t, Range> ranges_;
  // The begins of each placer's ranges (placer 0, nobody's, is not kept): a connection's
  // end and its flushes find its ranges without a walk through everybody's.
  std::unordered_map<uint64_t, std::set<uint64_t>> begins_of_placer_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_PLACED_RANGES_H_
