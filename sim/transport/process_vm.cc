// process_vm.cc -- process_vm_readv/process_vm_writev with partial transfers resumed.
#include "sim/transport/process_vm.h"

#include <errno.h>
#include <sys/uio.h>

namespace rpma_sim {
namespace {

template <typename Transfer>
bool MoveAll(int pid, uint64_t address, uint8_t* local, size_t length, Transfer transfer) {
  while (length > 0) {
    iovec here{local, length};
    iovec there{reinterpret_cast<void*>(address), length};
    ssize_t n = transfer(pid, &here, 1, &there, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    local += n;
    address += static_cast<uint64_t>(n);
    length -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool ReadFromProcess(int pid, uint64_t address, void* local, size_t length) {
  return MoveAll(pid, address, static_cast<uint8_t*>(local), length, process_vm_readv);
}

bool WriteToProcess(int pid, uint64_t address, const void* local, size_t length) {
  return MoveAll(pid, address, static_cast<uint8_t*>(const_cast<void*>(local)), length,
                 process_vm_writev);
}

}  // namespace rpma_sim
