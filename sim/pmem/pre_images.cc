// pre_images.cc -- saving and restoring the durable values of placed bytes, page by page.
#include "sim/pmem/pre_images.h"

#include <string.h>

#include <algorithm>

#include "sim/common/guarded_copy.h"

namespace rpma_sim {

void PreImages::SaveValue(uint64_t begin, const uint8_t* value, uint64_t length) {
  const uint64_t end = begin + length;
  while (begin < end) {
    uint64_t page = begin / kPage;
    uint64_t stop = std::min(end, (page + 1) * kPage);
    std::unique_ptr<uint8_t[]>& saved = pages_[page];
    if (!saved) saved.reset(new uint8_t[kPage]);
    // `value` may be the region's memory, which the application may have unmapped.
    if (GuardedCopy(saved.get() + begin % kPage, value, stop - begin) != CopyResult::kCopied)
      memset(saved.get() + begin % kPage, 0, stop - begin);
    value += stop - begin;
    begin = stop;
  }
}

void PreImages::SaveFrom(const PreImages& other, uint64_t from, uint64_t begin, uint64_t length) {
  while (length > 0) {
    // The part of the range within one page of each.
    const uint64_t step = std::min({length, kPage - from % kPage, kPage - begin % kPage});
    auto saved = other.pages_.find(from / kPage);
    if (saved != other.pages_.end()) SaveValue(begin, saved->second.get() + from % kPage, step);
    from += step;
    begin += step;
    length -= step;
  }
}

void PreImages::Restore(uint8_t* base, uint64_t begin, uint64_t end) const {
  while (begin < end) {
    uint64_t page = begin / kPage;
    uint64_t stop = std::min(end, (page + 1) * kPage);
    auto saved = pages_.find(page);
    if (saved != pages_.end())  // pages the application unmapped are left as they are
      GuardedCopy(base + begin, saved->second.get() + begin % kPage, stop - begin);
    begin = stop;
  }
}

}  // namespace rpma_sim
