// guarded_copy.h -- the simulator's copies to and from memory the application registered,
// made as a device's DMA is: whatever the application did to its view of the pages.
//
// A NIC reaches a registered region's pages, pinned when they were registered, whatever
// protection the application later gives them; pages it unmaps stay pinned until they are
// deregistered, and the process just no longer sees them. The simulator copies through the
// process's own view instead, so a region the application made read-only or inaccessible,
// or unmapped (both forbidden while registered, both survivable on hardware), would fault
// in the copy and kill the process. A guarded copy catches that fault (SIGSEGV, or SIGBUS
// of a file the application truncated) in the copying thread and does what the device
// would, where the kernel allows it: it copies again through /proc/self/mem, which reaches
// private pages past their protection, as a debugger does. Where that fails too (the pages
// are unmapped, or shared and not writable), the copy reports which side faulted, and the
// caller turns that into the error completion a device reports for memory it cannot reach
// (docs/differences.md says where this differs from hardware).
//
// The fault handlers are installed with the first guarded copy, before any other handler of
// the simulator's (those of moved pages and of guarded mappings call InstallCopyGuard
// first), so that theirs see a fault first and pass on what they do not claim. A handler
// the application installs afterwards sees the copies' faults first and must pass on what
// it does not claim, as for any library that handles faults.
#ifndef RPMA_SIM_COMMON_GUARDED_COPY_H_
#define RPMA_SIM_COMMON_GUARDED_COPY_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

namespace rpma_sim {

// What a guarded copy did.
enum class CopyResult {
  kCopied,
  kSourceUnreachable,  // the bytes it copies from could not be read
  kTargetUnreachable,  // the bytes it copies to could not be written
};

// Copies `length` bytes from `from` to `to` (ranges that do not overlap), as a device
// would (above).
CopyResult GuardedCopy(void* to, const void* from, size_t length);

// Stores `value` at the 8-byte aligned `to` in one atomic store, as GuardedCopy otherwise.
CopyResult GuardedStore64(uint64_t* to, uint64_t value);

// The `length` bytes at `from`, read as GuardedCopy reads them; zeros if they cannot be
// (the persistence model's and the crash recorder's copies of what a region held).
std::vector<uint8_t> ReadAsDevice(const uint8_t* from, size_t length);

// The second try's way to pages the process maps shared from a file the simulator holds
// (moved heap pages, shared_pages.h), which /proc/self/mem does not write past their
// protection, nor reach once unmapped: copies `length` bytes (within one page) to or from
// the file behind `address`. False, with errno, if there is none or the copy failed.
using PinnedPagesAccess = bool (*)(uintptr_t address, uint8_t* bytes, size_t length, bool write);
void SetPinnedPagesAccess(PinnedPagesAccess access);

// Installs the fault handlers the copies rely on (once; later calls do nothing).
void InstallCopyGuard();

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_GUARDED_COPY_H_
