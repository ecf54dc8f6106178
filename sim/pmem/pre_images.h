// pre_images.h -- what a region's placed bytes held while they were still durable: the
// values a power failure puts back.
//
// Kept by page (4 KiB), allocated when the first byte of a page is placed over durable
// bytes, so the cost is the pages with placed bytes, not the region. Not thread-safe: the
// persistence domain that owns it locks.
#ifndef RPMA_SIM_PMEM_PRE_IMAGES_H_
#define RPMA_SIM_PMEM_PRE_IMAGES_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <unordered_map>

namespace rpma_sim {

class PreImages {
 public:
  // Saves base[begin, end) (offsets in the region at `base`).
  void Save(const uint8_t* base, uint64_t begin, uint64_t end) {
    SaveValue(begin, base + begin, end - begin);
  }
  // Saves value[0, length) as the pre-image of [begin, begin + length).
  void SaveValue(uint64_t begin, const uint8_t* value, uint64_t length);
  // Puts back base[begin, end); every byte of it must have been saved.
  void Restore(uint8_t* base, uint64_t begin, uint64_t end) const;
  // Saves, for [begin, begin + length), what `other` saved for [from, from + length) (the
  // same bytes of memory in another region's offsets), where it saved them.
  void SaveFrom(const PreImages& other, uint64_t from, uint64_t begin, uint64_t length);
  void Clear() { pages_.clear(); }
  size_t pages() const { return pages_.size(); }

 private:
  static constexpr uint64_t kPage = 4096;
  std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;  // by offset / kPage
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_PRE_IMAGES_H_
