// process_vm.cc -- process_vm_readv/process_vm_writev, one range or many, with partial
// transfers resumed.
#include "sim/transport/process_vm.h"

#include <errno.h>

namespace rpma_sim {
namespace {

// Moves `count` ranges (local[i] to or from remote[i], of equal lengths) and returns how
// many of them, from the first, moved whole. A transfer the kernel cut short resumes where
// it stopped; one that moves nothing ends it. The vectors are consumed.
size_t MoveRanges(int pid, ProcessVmBatch::Direction direction, iovec* local, iovec* remote,
                  size_t count) {
  size_t done = 0;
  for (;;) {
    while (done < count && local[done].iov_len == 0) ++done;  // moved whole, with no bytes
    if (done == count) break;
    const unsigned long left = static_cast<unsigned long>(count - done);
    ssize_t n = direction == ProcessVmBatch::Direction::kToProcess
                    ? process_vm_writev(pid, local + done, left, remote + done, left, 0)
                    : process_vm_readv(pid, local + done, left, remote + done, left, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    size_t moved = static_cast<size_t>(n);
    while (moved > 0 && done < count) {
      const size_t step = moved < local[done].iov_len ? moved : local[done].iov_len;
      local[done].iov_base = static_cast<uint8_t*>(local[done].iov_base) + step;
      local[done].iov_len -= step;
      remote[done].iov_base = static_cast<uint8_t*>(remote[done].iov_base) + step;
      remote[done].iov_len -= step;
      moved -= step;
      if (local[done].iov_len == 0) ++done;
    }
  }
  return done;
}

bool MoveOne(int pid, ProcessVmBatch::Direction direction, uint64_t address, void* local,
             size_t length) {
  iovec here{local, length};
  iovec there{reinterpret_cast<void*>(address), length};
  return MoveRanges(pid, direction, &here, &there, 1) == 1;
}

}  // namespace

bool ReadFromProcess(int pid, uint64_t address, void* local, size_t length) {
  return MoveOne(pid, ProcessVmBatch::Direction::kFromProcess, address, local, length);
}

bool WriteToProcess(int pid, uint64_t address, const void* local, size_t length) {
  return MoveOne(pid, ProcessVmBatch::Direction::kToProcess, address, const_cast<void*>(local),
                 length);
}

bool ProcessVmBatch::Add(Direction direction, uint64_t address, uint8_t* local, size_t length) {
  if (Refuses(direction)) return false;
  direction_ = direction;
  local_[count_] = iovec{local, length};
  remote_[count_] = iovec{reinterpret_cast<void*>(address), length};
  ++count_;
  return true;
}

size_t ProcessVmBatch::Move() {
  size_t moved = MoveRanges(pid_, direction_, local_, remote_, count_);
  count_ = 0;
  return moved;
}

}  // namespace rpma_sim
