// shadow_memory.h -- the soak's model of one registered region at the target: for every byte
// the value it must hold now (current) and the value a power failure must put back (durable),
// and the checks of the real region against them.
#ifndef RPMA_SIM_TESTS_SOAK_SHADOW_MEMORY_H_
#define RPMA_SIM_TESTS_SOAK_SHADOW_MEMORY_H_

#include <rpma_sim.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace soak {

// Where the real region first differs from the model; empty() when they agree.
struct Mismatch {
  std::string what;  // a one-line description with the offset and the first bytes that differ

  bool empty() const { return what.empty(); }
};

// The model of a region of `size` bytes that starts at `base` (the real memory, read only by
// the checks). Not thread-safe: the soak's one thread owns it, and looks at `base` only when no
// work request that could place bytes there is outstanding.
class ShadowRegion {
 public:
  ShadowRegion(std::string name, const uint8_t* base, size_t size);
  ShadowRegion(const ShadowRegion&) = delete;
  ShadowRegion& operator=(const ShadowRegion&) = delete;

  const std::string& name() const { return name_; }
  size_t size() const { return current_.size(); }
  const uint8_t* current() const { return current_.data(); }

  // A remote operation places `len` bytes at `offset`. Returns what they replaced, for Undo.
  std::vector<uint8_t> Place(size_t offset, const uint8_t* bytes, size_t len);

  // Puts back what Place returned (the operation turned out not to have executed).
  void Undo(size_t offset, const std::vector<uint8_t>& before);

  // A completed persistent flush (or the target's own persist) made [offset, offset + len)
  // durable with the values `bytes` (the current values where the flush executed).
  void MakeDurable(size_t offset, const uint8_t* bytes, size_t len);

  // Everything current becomes durable (after a power failure, or a persist of everything).
  void AllDurable() { durable_ = current_; }

  // The real region equals the model's current values, byte for byte.
  Mismatch CheckCurrent() const;

  // After a power failure with `mode`: LOSS_ALL, every byte is its durable value; LOSS_NONE,
  // every byte its current value; LOSS_WORDS / LOSS_LINES, every 8-byte word / 64-byte line
  // (aligned by address, as the CPU aligns them, and clipped to the region) is wholly its
  // durable or wholly its current value. On success the model adopts the real bytes as both
  // current and durable, and *reverted counts the units (bytes for ALL/NONE) that reverted.
  Mismatch CheckPowerFailure(rpma_sim_loss mode, size_t* reverted);

 private:
  Mismatch Describe(size_t offset, const std::vector<uint8_t>& expected, const char* against) const;

  const std::string name_;
  const uint8_t* const base_;
  std::vector<uint8_t> current_;
  std::vector<uint8_t> durable_;
};

}  // namespace soak

#endif  // RPMA_SIM_TESTS_SOAK_SHADOW_MEMORY_H_
