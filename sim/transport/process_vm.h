// process_vm.h -- moving bytes between this process and another one with
// process_vm_readv/process_vm_writev (Linux cross-memory attach).
//
// The kernel allows it where ptrace would be allowed (same user, and Yama's ptrace_scope
// permitting, or CAP_SYS_PTRACE). RPMA_SIM_SHM_PROCESS_VM=0 turns its use off
// (fabric/config.h).
#ifndef RPMA_SIM_TRANSPORT_PROCESS_VM_H_
#define RPMA_SIM_TRANSPORT_PROCESS_VM_H_

#include <stddef.h>
#include <stdint.h>

namespace rpma_sim {

// Copies `length` bytes at `address` in process `pid` into `local`. False if the kernel
// refused or the range is not mapped there.
bool ReadFromProcess(int pid, uint64_t address, void* local, size_t length);

// Copies `length` bytes from `local` to `address` in process `pid`.
bool WriteToProcess(int pid, uint64_t address, const void* local, size_t length);

// Payloads from this size up travel by process_vm when the responder can reach the
// requester; smaller ones are cheaper to copy through the ring.
constexpr size_t kProcessVmThreshold = 16 * 1024;

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_PROCESS_VM_H_
