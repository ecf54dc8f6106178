// byte_ranges.h -- a set of byte offsets kept as disjoint, non-touching ranges: the bytes of
// a region not durable at a crash point (crash_explorer.cc, crash_lint.cc).
#ifndef RPMA_SIM_PMEM_BYTE_RANGES_H_
#define RPMA_SIM_PMEM_BYTE_RANGES_H_

#include <stdint.h>

#include <iterator>
#include <map>

namespace rpma_sim {

class ByteRanges {
 public:
  // Adds [begin, end), merging with the ranges it touches.
  void Add(uint64_t begin, uint64_t end) {
    if (begin >= end) return;
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second >= begin) {
      --it;
      begin = it->first;
    }
    while (it != ranges_.end() && it->first <= end) {
      if (it->second > end) end = it->second;
      it = ranges_.erase(it);
    }
    ranges_.emplace(begin, end);
  }

  // Removes [begin, end).
  void Remove(uint64_t begin, uint64_t end) {
    if (begin >= end) return;
    auto it = ranges_.upper_bound(begin);
    if (it != ranges_.begin() && std::prev(it)->second > begin) --it;
    while (it != ranges_.end() && it->first < end) {
      const uint64_t first = it->first, last = it->second;
      it = ranges_.erase(it);
      if (first < begin) ranges_.emplace(first, begin);
      if (last > end) {
        ranges_.emplace(end, last);
        break;
      }
    }
  }

  // Whether every byte of [begin, end) is in the set.
  bool Covers(uint64_t begin, uint64_t end) const {
    if (begin >= end) return true;
    auto it = ranges_.upper_bound(begin);
    return it != ranges_.begin() && std::prev(it)->second >= end;
  }

  // Whether any byte of [begin, end) is in the set.
  bool Touches(uint64_t begin, uint64_t end) const {
    auto it = ranges_.lower_bound(end);
    return it != ranges_.begin() && std::prev(it)->second > begin;
  }

  bool empty() const { return ranges_.empty(); }
  const std::map<uint64_t, uint64_t>& ranges() const { return ranges_; }  // begin -> end

 private:
  std::map<uint64_t, uint64_t> ranges_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_BYTE_RANGES_H_
