// page_moves.h -- the system calls that move a range of private anonymous pages into a shared
// mapping of a memfd, in place, and back, keeping their bytes (shared_pages.h keeps the table
// of moved ranges and makes other threads wait out a move).
//
// Ranges move into a region file, a memfd shared by many ranges, each into a slot of its
// own that no other range ever takes (the caller's table hands slots out, and makes a new
// file when one's slots are all taken): registering memory takes one file descriptor of the
// application's, not one per region. The file is sparse and sealed at a fixed size; a slot
// is far longer than any range that moves, so a range grown in place (mremap) reaches holes
// of its own slot, never another range's pages. A range's whole slot is emptied (its pages
// given back to the system) when it moves back: whoever still maps it (the application's
// mremap, a child forked without fork handlers, a peer's stale mapping) reads zeros there,
// never a newer range's bytes.
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

// A region file's slots: 4 Mi of 1 TiB each (a longer range does not move).
constexpr uint64_t kRegionSlotSize = uint64_t{1} << 40;
constexpr uint64_t kRegionSlots = uint64_t{1} << 22;
constexpr uint64_t kRegionFileSize = kRegionSlotSize * kRegionSlots;

// A region file.
struct RegionFile {
  int fd = -1;
  uint64_t device = 0;
  uint64_t inode = 0;
};

// Makes a region file (a memfd of kRegionFileSize, sealed against shrinking and growing).
// False (errno set) if the kernel refuses: no file descriptor left (EMFILE), for one.
bool MakeRegionFile(RegionFile* file);

// Whether `fd` is still the file with `device` and `inode`: an application that closes
// descriptors it does not own (closefrom, as it daemonizes) may have closed a region file's
// and reused the number. Checked before the file is written (a move, an emptied slot, a
// guarded copy into moved pages): never into the application's own file.
bool StillTheFile(int fd, uint64_t device, uint64_t inode);

// A range moved into the region file.
struct MovedRange {
  int fd = -1;          // its region file's, which other ranges share
  uint64_t offset = 0;  // the range's first byte in it: the start of its slot
  uint64_t device = 0;
  uint64_t inode = 0;
  void* aside = MAP_FAILED;  // its own mapping, one page long; MAP_FAILED if not kept
  bool locked = false;       // the pages were locked in memory (mlock, mlockall): they stay so
};

// Whether [start, end) is private anonymous read-write memory throughout: the only memory
// that moves.
bool IsPrivateAnonymous(uintptr_t start, uintptr_t end);

// Moves [start, end) (page-aligned, private anonymous) into `slot` of `file`, mapped shared
// over it. False (the range as it was, the slot empty) if the kernel refuses a step, or the
// range is longer than a slot.
bool MoveToMemfd(uintptr_t start, uintptr_t end, const RegionFile& file, uint64_t slot,
                 MovedRange* moved);

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
// protection, and empties its slot of the file. False if the kernel refused (the pages stay
// shared, the aside mapping given up).
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
