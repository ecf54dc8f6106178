// mapping_guard.h -- keeps a peer that truncates a file this process maps shared (a
// connection's segment, a peer's region file) from killing the process with SIGBUS.
//
// A shared mapping of a file faults with SIGBUS where the file no longer has the page, and
// a same-user peer can truncate the segment both sides map. While a mapping is guarded, a
// process-wide SIGBUS handler (installed with the first guard) replaces the mapping's pages
// from the faulting one to its end with private zeroed memory, marks the guard truncated,
// and returns: the access completes against the zeros (reads see zeros, writes go nowhere)
// and the owner, which checks truncated() after its accesses, ends what used the mapping.
// A SIGBUS anywhere else goes to the handler that was installed before (or kills the
// process, as without the guard). An application that installs its own SIGBUS handler
// afterwards replaces this one.
//
// Guards are slots of a fixed table (kSlots): the handler looks them up without a lock or an
// allocation. Past kSlots mappings, new ones are not guarded (logged once). A fork child
// unmaps every guarded mapping it inherited (they are its parent's connections') and starts
// with an empty table.
#ifndef RPMA_SIM_TRANSPORT_MAPPING_GUARD_H_
#define RPMA_SIM_TRANSPORT_MAPPING_GUARD_H_

#include <stddef.h>

#include <atomic>

namespace rpma_sim {

class MappingGuard {
 public:
  static constexpr int kSlots = 32768;  // both sides of 16,384 connections in one process

  // Guards [start, start + length), a shared mapping of a file.
  MappingGuard(const void* start, size_t length);
  // Stops guarding; call before the range is unmapped.
  ~MappingGuard();

  MappingGuard(const MappingGuard&) = delete;
  MappingGuard& operator=(const MappingGuard&) = delete;

  // Whether an access found pages the file no longer has (from then on the range is private
  // zeroed memory from there to its end). One atomic load.
  bool truncated() const {
    return truncated_ != nullptr && truncated_->load(std::memory_order_acquire);
  }
  bool guarded() const { return slot_ >= 0; }

 private:
  int slot_ = -1;
  const std::atomic<bool>* truncated_ = nullptr;  // the slot's flag, set by the handler
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_MAPPING_GUARD_H_
