// process_vm.h -- moving bytes between this process and another one with
// process_vm_readv/process_vm_writev (Linux cross-memory attach): one range at a time, or
// many ranges in one system call (ProcessVmBatch).
//
// The kernel allows it where ptrace would be allowed (same user, and Yama's ptrace_scope
// permitting, or CAP_SYS_PTRACE). RPMA_SIM_SHM_PROCESS_VM=0 turns its use off
// (fabric/config.h).
#ifndef RPMA_SIM_TRANSPORT_PROCESS_VM_H_
#define RPMA_SIM_TRANSPORT_PROCESS_VM_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

namespace rpma_sim {

// Copies `length` bytes at `address` in process `pid` into `local`. False if the kernel
// refused or the range is not mapped there.
bool ReadFromProcess(int pid, uint64_t address, void* local, size_t length);

// Copies `length` bytes from `local` to `address` in process `pid`.
bool WriteToProcess(int pid, uint64_t address, const void* local, size_t length);

// Payloads from this size up travel by process_vm when the responder can reach the
// requester; smaller ones are cheaper to copy through the ring.
constexpr size_t kProcessVmThreshold = 16 * 1024;

// Copies between this process and process `pid`, all in one direction, gathered to move in
// one system call (more only where the kernel moves part of them). At most kCopies.
class ProcessVmBatch {
 public:
  enum class Direction { kToProcess, kFromProcess };
  static constexpr size_t kCopies = 64;

  explicit ProcessVmBatch(int pid) : pid_(pid) {}
  ProcessVmBatch(const ProcessVmBatch&) = delete;
  ProcessVmBatch& operator=(const ProcessVmBatch&) = delete;

  // Whether a copy the other way, or one more, needs Move first.
  bool Refuses(Direction direction) const {
    return count_ == kCopies || (count_ > 0 && direction != direction_);
  }
  // Adds the copy of `length` bytes between `local` and `address` in the process; false
  // (nothing added) where Refuses.
  bool Add(Direction direction, uint64_t address, uint8_t* local, size_t length);
  size_t size() const { return count_; }

  // Moves the copies added since the last Move, in order, and forgets them. Returns how
  // many of them, from the first, moved whole: the kernel stops at the first range that
  // is not mapped in either process (or the process is gone, or refuses).
  size_t Move();

 private:
  const int pid_;
  Direction direction_ = Direction::kToProcess;
  size_t count_ = 0;
  iovec local_[kCopies];
  iovec remote_[kCopies];
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_PROCESS_VM_H_
