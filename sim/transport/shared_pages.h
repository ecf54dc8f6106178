// shared_pages.h -- moving the whole pages of a registered range of private anonymous
// memory (the heap, an anonymous mmap) into a shared mapping at the same address, so that a
// peer process on this host maps the same pages and reaches them with plain copies: no
// process_vm system call per operation (direct_request.h), as for a region in a file
// (file_backing.h).
//
// The pages become a MAP_SHARED mapping of the process's region file, a memfd sealed
// against shrinking and growing (a peer cannot make this process's memory fault), with the
// same contents, address and protection; the peer opens it as /proc/<pid>/fd/<fd> and maps
// the region's part of it. All regions share the one file (one descriptor in all). Only pages the
// range covers whole move: a partial first or last page, which holds other heap objects and the
// allocator's bookkeeping, stays where it is, and the peer reaches the range's bytes there with
// process_vm. What the application sees stays:
// - A store by another thread while the pages move waits: they are read-only while they
//   are copied, and a write fault there waits in a SIGSEGV handler until the move is over,
//   then is retried. For the two system calls that set the old mapping aside and put the
//   new one in place, the range is inaccessible, and a load waits the same way. A system
//   call that writes into the region itself during those microseconds (read(2) into it
//   from another thread), or reads it during those two calls, fails with EFAULT. The
//   handler is installed at the first move and passes every other fault to the one before
//   it; an application that installs its own afterwards replaces it.
// - The range's own mapping is set aside, emptied, while the pages are shared, and moves
//   back into place with them: the heap's mapping is whole again, and moving pages in and
//   back leaves the process no more mappings than before (where the kernel lacks
//   MREMAP_DONTUNMAP, Linux before 5.7, each move leaves two).
// - fork(): the child gets private copies in place of the shared pages, read from the file
//   as fork() begins (as a device's DMA under way would leave them; a store another thread
//   makes between the copy and the fork is not in them), with the protection the
//   application gave them; pages it unmapped stay unmapped. The child's stores never reach
//   the parent, nor the parent's or its peers' the child.
// - When the last region on the pages is deregistered they become private anonymous memory
//   again, with their contents and protection, so madvise(MADV_DONTNEED) zero-fills them
//   again (as malloc and calloc assume of memory they give back and take again). If the
//   kernel refuses, they stay shared and in the table (a fork still copies them).
// - madvise flags of the old pages (MADV_DONTFORK, MADV_HUGEPAGE) do not carry over to the
//   new mapping; mlock does (the pages are locked again after each move).
// Not moved (Share returns null; the peer then uses process_vm for all of the range):
// a range with no whole page; memory that is not private anonymous read-write memory
// throughout; pages that overlap moved pages that do not hold them whole, or pages being
// moved; beyond kMaxMoving moves under way at once.
#ifndef RPMA_SIM_TRANSPORT_SHARED_PAGES_H_
#define RPMA_SIM_TRANSPORT_SHARED_PAGES_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/transport/file_backing.h"
#include "sim/transport/page_moves.h"

namespace rpma_sim {

// Whether Share may move pages, or only find them moved (another region is on them).
enum class PageMoves { kAllowed, kOnlyIfMoved };

// What a registered region holds of moved pages: the extent its whole pages moved into (or
// found moved), and every moved extent on a page it touches, which stays shared while the
// region is registered (moving it back would make a peer's process_vm to the region fail
// for a moment).
class SharedPages {
 public:
  // Moves (both ways) under way at once, or ended less than a second ago (a slot is kept
  // that long for a late fault; shared_pages.cc).
  static constexpr int kMaxMoving = 1024;

  // Moves the whole pages of [addr, addr + length) (kAllowed; or finds them moved for a
  // region before) and holds every moved page it touches; null if it holds none.
  static std::unique_ptr<SharedPages> Share(const void* addr, size_t length, PageMoves moves);

  // The last holder of moved pages moves them back to private anonymous memory, if they are
  // still the moved mapping (the application may have unmapped them).
  ~SharedPages();

  SharedPages(const SharedPages&) = delete;
  SharedPages& operator=(const SharedPages&) = delete;

  // The file behind [addr, addr + length) (the region's range), for a peer to map
  // (MapFileRange): the part of it the moved pages hold. False if they hold none of it.
  bool BackingOf(const void* addr, size_t length, FileBacking* backing) const;

  // pthread_atfork's handlers: BeforeFork copies every moved extent (the table stays
  // locked until after the fork); the child puts its copies in place of the shared pages,
  // closes the region file and empties its table; the parent drops the copies.
  static void BeforeFork();
  static void AfterForkInParent();
  static void AfterForkInChild();

  // How many moved extents this process has (for tests).
  static size_t ExtentCount();
  // How many slots each region file made from now on has (kRegionSlots unless a test makes
  // them fewer, to see files fill up); the region files open (for tests).
  static void SetSlotsPerFileForTest(uint64_t slots);
  static size_t FileCount();

 private:
  SharedPages() = default;
  void SetFile(uintptr_t start, uintptr_t end, const MovedRange& moved);
  static void Release(uint64_t extent);

  std::vector<uint64_t> extents_;  // ids in the process's table, each held once
  // The extent that holds the region's whole pages (path empty: none).
  uintptr_t start_ = 0;  // at file_offset_ in the file
  uintptr_t end_ = 0;
  uint64_t file_offset_ = 0;
  std::string path_;  // the region file as /proc/<pid>/fd/<fd>
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SHARED_PAGES_H_
