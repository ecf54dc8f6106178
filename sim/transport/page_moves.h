// page_moves.h -- the system calls that move a range of private anonymous pages into a shared
// mapping of a memfd, in place, and back, keeping their bytes (shared_pages.h keeps the table
// of moved ranges and makes other threads wait out a move).
//
// While a range moves it is read-only (a store faults), and for the two calls that set its
// old mapping aside and put the new one in place it is inaccessible (a load faults too): the
// caller's SIGSEGV handler makes such faults wait. The range's own mapping is kept aside,
// one page long, while the pages are shared, and moves back into place with them: the
// heap's mapping is whole again afterwards, where a mapping made anew would never merge
// with it (each move would leave the process two more mappings, until it ran out of them:
// vm.max_map_count). Kernels before 5.7 (no MREMAP_DONTUNMAP) make a new one.
#ifndef RPMA_SIM_TRANSPORT_PAGE_MOVES_H_
#define RPMA_SIM_TRANSPORT_PAGE_MOVES_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include <utility>
#include <vector>

namespace rpma_sim {

// The protection of the pages that move, before and after.
constexpr int kMovedPagesProt = PROT_READ | PROT_WRITE;

// The protection of a part of a moved range (the application may change it).
struct ProtectedPart {
  uintptr_t start;
  uintptr_t end;
  int prot;
};
using Protections = std::vector<ProtectedPart>;

// A range moved into a memfd.
struct MovedRange {
  int fd = -1;
  uint64_t device = 0;
  uint64_t inode = 0;
  void* aside = MAP_FAILED;  // its own mapping, one page long; MAP_FAILED if not kept
  bool locked = false;       // the pages were locked in memory (mlock, mlockall): they stay so
};

// Whether [start, end) is private anonymous read-write memory throughout: the only memory
// that moves.
bool IsPrivateAnonymous(uintptr_t start, uintptr_t end);

// Moves [start, end) (page-aligned, private anonymous) into a new memfd, sealed against
// shrinking and growing, mapped shared over it. False (the range as it was) if the kernel
// refuses a step.
bool MoveToMemfd(uintptr_t start, uintptr_t end, MovedRange* moved);

// The parts of [start, end) that are still the mapping of `moved`'s file the move made
// (the application may have unmapped or replaced some), each with its protection, in
// *parts; true if they are the whole range.
bool MovedParts(uintptr_t start, uintptr_t end, const MovedRange& moved, Protections* parts);

// The ranges of this process's mappings a fork child does not get (madvise MADV_DONTFORK,
// which the application may set on a moved range too: "dc" among the VmFlags
// /proc/self/smaps lists), in address order. Empty if smaps cannot be read.
std::vector<std::pair<uintptr_t, uintptr_t>> NotCopiedOnFork();

// Takes out of *parts what lies in `ranges` (in address order), splitting parts as needed.
void RemoveRanges(const std::vector<std::pair<uintptr_t, uintptr_t>>& ranges, Protections* parts);

// Moves what is left of [start, end) back to private anonymous memory, with its bytes and
// protection, and gives the file up. False if the kernel refused (the pages stay shared,
// the file open, the aside mapping given up).
bool MoveBack(uintptr_t start, uintptr_t end, const MovedRange& moved);

// For a fork child, in the parent before the fork: a private copy of [start, end) read from
// the file (whatever the range's protection), or MAP_FAILED.
void* CopyForChild(uintptr_t start, uintptr_t end, const MovedRange& moved);
// In the child: puts the parts of `copy` (CopyForChild's) in place of `parts`, with their
// protection (or unmaps a part the kernel will not replace), and unmaps the rest of `copy`
// and the child's aside mapping. The file stays open; the caller closes it.
void PutChildCopy(uintptr_t start, uintptr_t end, void* copy, const Protections& parts,
                  const MovedRange& moved);

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_PAGE_MOVES_H_
