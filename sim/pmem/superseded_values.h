// superseded_values.h -- under flush scope qp, the values one connection placed that another
// connection wrote over before anything made them durable.
//
// librpma's portable flush (flush scope qp) makes durable every earlier write of its
// connection. When another connection has written over some of those bytes meanwhile, memory
// holds the newer value, and the older one is still what the flush guarantees to have reached
// persistence: after a power failure the bytes hold it or a newer one, never what they held
// before both. So a placement over bytes that another connection placed first keeps their
// value here, by address, with that connection; a flush of that connection makes them the
// bytes' durable value (their pre-image), and cuts every older value of the same bytes.
//
// A kept value stands only while its bytes stay placed: whatever makes them durable cuts it.
// Bounded (kMaxBytes, kMaxValues): past either the oldest values are dropped, and a flush of their
// connection then leaves the bytes' older durable value (counted in dropped()). Not thread-safe:
// the persistence domain that owns it locks.
#ifndef RPMA_SIM_PMEM_SUPERSEDED_VALUES_H_
#define RPMA_SIM_PMEM_SUPERSEDED_VALUES_H_

#include <stddef.h>
#include <stdint.h>

#include <list>
#include <vector>

namespace rpma_sim {

class SupersededValues {
 public:
  static constexpr uint64_t kMaxBytes = 16 << 20;
  static constexpr size_t kMaxValues = 1 << 16;

  // The `length` bytes at `address`, which hold what `placer` placed there, are about to be
  // written over by another connection.
  void Keep(uint64_t placer, uintptr_t address, uint64_t length);

  // Calls `apply(address, bytes, length)` for each value `placer` kept, oldest first, and
  // forgets it; each one first cuts its bytes out of the older values of every connection.
  template <typename Apply>
  void TakeOf(uint64_t placer, Apply&& apply) {
    for (auto it = values_.begin(); it != values_.end();) {
      if (it->placer != placer) {
        ++it;
        continue;
      }
      CutBefore(it, it->address, it->address + it->bytes.size());
      apply(it->address, it->bytes.data(), static_cast<uint64_t>(it->bytes.size()));
      it = Erase(it);
    }
  }

  // The bytes [begin, end) were made durable (or left the model): no kept value holds them.
  void Cut(uintptr_t begin, uintptr_t end) { CutBefore(values_.end(), begin, end); }
  // `placer` has ended: nothing will flush its values.
  void DropOf(uint64_t placer);
  void Clear() {
    values_.clear();
    bytes_ = 0;
  }

  bool empty() const { return values_.empty(); }
  size_t size() const { return values_.size(); }
  uint64_t bytes() const { return bytes_; }
  uint64_t dropped() const { return dropped_; }  // bytes dropped at the bound

 private:
  struct Value {
    uint64_t placer;
    uintptr_t address;
    std::vector<uint8_t> bytes;
  };
  using Iterator = std::list<Value>::iterator;

  // Cuts [begin, end) out of every value older than `stop`.
  void CutBefore(Iterator stop, uintptr_t begin, uintptr_t end);
  Iterator Erase(Iterator it);

  std::list<Value> values_;  // oldest first
  uint64_t bytes_ = 0;       // held by values_, at most kMaxBytes
  uint64_t dropped_ = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_SUPERSEDED_VALUES_H_
