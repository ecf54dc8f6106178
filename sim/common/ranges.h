// ranges.h -- the one bounds check for a range inside a region: a remote access, a local
// buffer, a record a peer wrote. Overflow-safe for any 64-bit inputs.
#ifndef RPMA_SIM_COMMON_RANGES_H_
#define RPMA_SIM_COMMON_RANGES_H_

#include <stdint.h>

namespace rpma_sim {

// Whether [offset, offset + length) lies within a region of `size` bytes.
inline bool OffsetRangeWithin(uint64_t size, uint64_t offset, uint64_t length) {
  return offset <= size && length <= size - offset;
}

// Whether [address, address + length) lies within the region [start, start + size).
inline bool RangeWithin(uint64_t start, uint64_t size, uint64_t address, uint64_t length) {
  return address >= start && OffsetRangeWithin(size, address - start, length);
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_RANGES_H_
