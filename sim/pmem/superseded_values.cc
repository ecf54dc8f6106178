// superseded_values.cc -- keeping, cutting and taking the overwritten values of connections.
#include "sim/pmem/superseded_values.h"

#include <algorithm>

#include "sim/common/guarded_copy.h"

namespace rpma_sim {

void SupersededValues::Keep(uint64_t placer, uintptr_t address, uint64_t length) {
  if (length == 0) return;
  if (length > kMaxBytes) {
    dropped_ += length;
    return;
  }
  while (bytes_ + length > kMaxBytes || values_.size() >= kMaxValues) {
    dropped_ += values_.front().bytes.size();
    Erase(values_.begin());
  }
  const uint8_t* from = reinterpret_cast<const uint8_t*>(address);
  values_.push_back(Value{placer, address, ReadAsDevice(from, length)});
  bytes_ += length;
}

void SupersededValues::DropOf(uint64_t placer) {
  for (auto it = values_.begin(); it != values_.end();)
    it = it->placer == placer ? Erase(it) : std::next(it);
}

void SupersededValues::CutBefore(Iterator stop, uintptr_t begin, uintptr_t end) {
  for (auto it = values_.begin(); it != stop;) {
    const uintptr_t first = it->address;
    const uintptr_t last = first + it->bytes.size();
    if (last <= begin || first >= end) {
      ++it;
      continue;
    }
    if (first >= begin && last <= end) {
      it = Erase(it);
      continue;
    }
    // What is left after the cut: a part before it, after it, or both (then two values).
    if (last > end) {
      const uint8_t* tail = it->bytes.data() + (end - first);
      values_.insert(std::next(it),
                     Value{it->placer, end, std::vector<uint8_t>(tail, tail + (last - end))});
    }
    const uintptr_t kept_end = std::min(last, std::max(first, begin));
    it->bytes.resize(kept_end - first);
    it->bytes.shrink_to_fit();
    bytes_ -= (last - first) - (kept_end - first) - (last > end ? last - end : 0);
    it = it->bytes.empty() ? Erase(it) : std::next(it);
  }
}

SupersededValues::Iterator SupersededValues::Erase(Iterator it) {
  bytes_ -= it->bytes.size();
  return values_.erase(it);
}

}  // namespace rpma_sim
