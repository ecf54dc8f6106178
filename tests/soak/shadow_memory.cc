// shadow_memory.cc -- the soak's model of a region: current and durable bytes, and the checks.
#include "tests/soak/shadow_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace soak {

ShadowRegion::ShadowRegion(std::string name, const uint8_t* base, size_t size)
    : name_(std::move(name)), base_(base), current_(base, base + size), durable_(current_) {}

std::vector<uint8_t> ShadowRegion::Place(size_t offset, const uint8_t* bytes, size_t len) {
  std::vector<uint8_t> before(current_.begin() + offset, current_.begin() + offset + len);
  std::copy(bytes, bytes + len, current_.begin() + offset);  // len may be 0, bytes null
  return before;
}

void ShadowRegion::Undo(size_t offset, const std::vector<uint8_t>& before) {
  std::copy(before.begin(), before.end(), current_.begin() + offset);
}

void ShadowRegion::MakeDurable(size_t offset, const uint8_t* bytes, size_t len) {
  std::copy(bytes, bytes + len, durable_.begin() + offset);
}

Mismatch ShadowRegion::Describe(size_t offset, const std::vector<uint8_t>& expected,
                                const char* against) const {
  char line[160];
  snprintf(line, sizeof(line), "region %s (%zu bytes), offset %zu: expected (%s)", name_.c_str(),
           size(), offset, against);
  std::string what = line;
  size_t end = std::min(size(), offset + 16);
  for (size_t i = offset; i < end; ++i) {
    snprintf(line, sizeof(line), " %02x", expected[i]);
    what += line;
  }
  what += ", got";
  for (size_t i = offset; i < end; ++i) {
    snprintf(line, sizeof(line), " %02x", base_[i]);
    what += line;
  }
  return Mismatch{what};
}

Mismatch ShadowRegion::CheckCurrent() const {
  if (memcmp(base_, current_.data(), size()) == 0) return Mismatch();
  size_t at = 0;
  while (base_[at] == current_[at]) ++at;
  return Describe(at, current_, "current");
}

Mismatch ShadowRegion::CheckPowerFailure(rpma_sim_loss mode, size_t* reverted) {
  *reverted = 0;
  if (mode == RPMA_SIM_LOSS_ALL || mode == RPMA_SIM_LOSS_NONE) {
    const std::vector<uint8_t>& expected = mode == RPMA_SIM_LOSS_ALL ? durable_ : current_;
    if (memcmp(base_, expected.data(), size()) != 0) {
      size_t at = 0;
      while (base_[at] == expected[at]) ++at;
      return Describe(at, expected, mode == RPMA_SIM_LOSS_ALL ? "durable" : "current");
    }
    for (size_t i = 0; i < size(); ++i) *reverted += current_[i] != durable_[i];
  } else {
    const uintptr_t unit = mode == RPMA_SIM_LOSS_WORDS ? 8 : 64;
    const uintptr_t start = reinterpret_cast<uintptr_t>(base_);
    for (uintptr_t at = start & ~(unit - 1); at < start + size(); at += unit) {
      size_t from = at < start ? 0 : at - start;
      size_t to = std::min<size_t>(at + unit - start, size());
      size_t len = to - from;
      bool is_current = memcmp(base_ + from, current_.data() + from, len) == 0;
      bool is_durable = memcmp(base_ + from, durable_.data() + from, len) == 0;
      if (!is_current && !is_durable) {
        Mismatch torn = Describe(from, durable_, "durable");
        return Mismatch{torn.what + "; the unit is neither wholly durable nor wholly current" +
                        Describe(from, current_, "current").what.substr(torn.what.find(':'))};
      }
      *reverted += !is_current;
    }
  }
  current_.assign(base_, base_ + size());
  durable_ = current_;
  return Mismatch();
}

}  // namespace soak
