// page_moves.cc -- moving a range of private anonymous pages into a shared mapping of the
// process's region file in place, and back.
#include "sim/transport/page_moves.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>

#include "sim/transport/file_backing.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4  // Linux 5.7
#endif

namespace rpma_sim {
namespace {

constexpr int kProt = kMovedPagesProt;

uintptr_t PageSize() {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Copies `length` bytes from `from` to `to` in this process by the kernel
// (process_vm_readv): the pages hold bytes a sanitizer's memcpy would report (a heap
// object's redzones), and other threads' stores made before the copy, which
// ThreadSanitizer cannot see ordered by a protection change. A system call of its own, not
// the sanitizers' wrapper: `to` is memory the raw mremaps below made or moved, which
// ThreadSanitizer would take for the memory another thread's move used at the same address
// a moment before. Where the system call is not allowed (a seccomp filter), memcpy. False if
// the range cannot be read (the application unmapped it meanwhile).
bool KernelCopy(void* to, const void* from, size_t length) {
  size_t done = 0;
  while (done < length) {
    // The kernel copies at most about 2 GiB a call.
    const size_t piece = std::min<size_t>(length - done, size_t{1} << 30);
    struct iovec local = {static_cast<uint8_t*>(to) + done, piece};
    struct iovec remote = {const_cast<uint8_t*>(static_cast<const uint8_t*>(from)) + done, piece};
    const ssize_t copied = syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0);
    if (copied > 0) {
      done += static_cast<size_t>(copied);
    } else if (copied < 0 && done == 0 && (errno == ENOSYS || errno == EPERM)) {
      memcpy(to, from, length);
      return true;
    } else {
      return false;
    }
  }
  return true;
}

// Copies [start, end) into `to`, the range read-only from then on (so that no store lands
// between the copy and the swap). False if it cannot be read.
bool CopyOut(uintptr_t start, uintptr_t end, void* to) {
  void* from = reinterpret_cast<void*>(start);
  mprotect(from, end - start, PROT_READ);
  return KernelCopy(to, from, end - start);
}

// The mappings that replace a range in place, as system calls of their own: a sanitizer's
// mmap and mremap take the range for new memory (ThreadSanitizer forgets who accessed it,
// AddressSanitizer the redzones of the heap objects on it), but the bytes are the same.
void* RawMapShared(uintptr_t start, size_t length, int fd, uint64_t offset) {
  return reinterpret_cast<void*>(
      syscall(SYS_mmap, start, length, kProt, MAP_SHARED | MAP_FIXED, fd, offset));
}

void* RawMremap(void* from, size_t length, uintptr_t to) {
  return reinterpret_cast<void*>(
      syscall(SYS_mremap, from, length, length, MREMAP_MAYMOVE | MREMAP_FIXED, to));
}

// Moves the mapping of [start, start + length), with its pages, where the kernel picks,
// leaving the range mapped and empty; MAP_FAILED (nothing changed) where it cannot.
void* RawSetAside(uintptr_t start, size_t length) {
  return reinterpret_cast<void*>(
      syscall(SYS_mremap, start, length, length, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, 0));
}

// The aside mapping (one page) grown back to `length`; MAP_FAILED (then unmapped) if the
// kernel refuses.
void* GrowAside(void* aside, size_t length) {
  void* grown =
      reinterpret_cast<void*>(syscall(SYS_mremap, aside, PageSize(), length, MREMAP_MAYMOVE));
  if (grown == MAP_FAILED) munmap(aside, PageSize());
  return grown;
}

// A private anonymous copy of [start, end), or MAP_FAILED; the range is read-only afterwards.
void* PrivateCopy(uintptr_t start, uintptr_t end) {
  const size_t length = end - start;
  void* copy = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy == MAP_FAILED || CopyOut(start, end, copy)) return copy;
  munmap(copy, length);
  return MAP_FAILED;
}

// Puts the private `copy` in the place of [start, end). False (the copy unmapped) if the
// kernel refuses.
bool PutInPlace(void* copy, uintptr_t start, uintptr_t end) {
  if (RawMremap(copy, end - start, start) != MAP_FAILED) return true;
  munmap(copy, end - start);
  return false;
}

// Moves [start, end) into `fd` at `offset`, and sets its own mapping aside (*aside, one
// page). False (the range as it was, *aside MAP_FAILED) if the kernel refuses.
bool MoveInto(int fd, uint64_t offset, uintptr_t start, uintptr_t end, void** aside) {
  const size_t length = end - start;
  *aside = MAP_FAILED;
  void* staging =
      mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (staging == MAP_FAILED) return false;
  void* range = reinterpret_cast<void*>(start);
  if (!CopyOut(start, end, staging)) {
    mprotect(range, length, kProt);
    munmap(staging, length);
    return false;
  }
  // Empty once its pages are aside: inaccessible meanwhile (a load waits, as a store does).
  if (mprotect(range, length, PROT_NONE) == 0) *aside = RawSetAside(start, length);
  const bool moved = RawMapShared(start, length, fd, offset) != MAP_FAILED;
  if (!moved && *aside != MAP_FAILED) {
    if (RawMremap(*aside, length, start) == MAP_FAILED) {
      // The range is empty and its pages will not go back: its bytes from the copy.
      mprotect(range, length, kProt);
      memcpy(range, staging, length);
      munmap(*aside, length);
    }
    *aside = MAP_FAILED;
  }
  if (!moved) mprotect(range, length, kProt);  // the old pages
  if (moved && *aside != MAP_FAILED) {
    // Its bytes are in the file now: it keeps no memory, and one page of address space.
    munlock(*aside, length);
    madvise(*aside, length, MADV_DONTNEED);
    if (length > PageSize())
      munmap(static_cast<uint8_t*>(*aside) + PageSize(), length - PageSize());
  }
  munmap(staging, length);
  return moved;
}

// Puts private anonymous pages with the same bytes in place of [start, end): the range's own
// mapping set aside (`aside`, which this consumes), or else a new one; false (the range as
// it was) if the kernel refuses.
bool MakePrivate(uintptr_t start, uintptr_t end, void* aside) {
  const size_t length = end - start;
  if (aside != MAP_FAILED) aside = GrowAside(aside, length);
  if (aside != MAP_FAILED) {
    if (mprotect(aside, length, kProt) == 0 && CopyOut(start, end, aside)) {
      if (PutInPlace(aside, start, end)) return true;  // it merges with the heap around it
    } else {
      munmap(aside, length);
    }
  }
  void* copy = PrivateCopy(start, end);
  if (copy != MAP_FAILED && PutInPlace(copy, start, end)) return true;
  mprotect(reinterpret_cast<void*>(start), length, kProt);
  return false;
}

// Gives each part the protection it had (the pages that replace a range are read-write).
void Reprotect(const Protections& parts) {
  for (const ProtectedPart& part : parts)
    if (part.prot != kProt)
      mprotect(reinterpret_cast<void*>(part.start), part.end - part.start, part.prot);
}

// Whether a page of [start, end) is locked in memory: none is unless the process has
// locked memory at all (VmLck in /proc/self/status, a short read), else smaps says which
// mappings are ("lo" among their VmFlags).
bool LockedInMemory(uintptr_t start, uintptr_t end) {
  FILE* status = fopen("/proc/self/status", "re");
  if (status == nullptr) return false;
  char line[256];
  long locked_kb = 0;
  while (fgets(line, sizeof(line), status) != nullptr)
    if (sscanf(line, "VmLck: %ld kB", &locked_kb) == 1) break;
  fclose(status);
  if (locked_kb == 0) return false;
  FILE* smaps = fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return false;
  bool overlaps = false;
  bool locked = false;
  while (!locked && fgets(line, sizeof(line), smaps) != nullptr) {
    unsigned long from, to;
    if (sscanf(line, "%lx-%lx ", &from, &to) == 2)
      overlaps = from < end && start < to;
    else if (overlaps && strncmp(line, "VmFlags:", 8) == 0)
      locked = strstr(line + 8, " lo") != nullptr;
  }
  fclose(smaps);
  return locked;
}

// Locks each part again where the range was locked when it moved.
void Relock(const Protections& parts, const MovedRange& moved) {
  if (!moved.locked) return;
  for (const ProtectedPart& part : parts)
    mlock(reinterpret_cast<void*>(part.start), part.end - part.start);
}

// Gives the pages of a range's slot of the file back to the system: all of it, for the
// application may have grown the range in it (mremap).
void EmptySlot(const MovedRange& moved) {
  if (!StillTheFile(moved.fd, moved.device, moved.inode)) return;
  fallocate(moved.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(moved.offset),
            static_cast<off_t>(kRegionSlotSize));
}

}  // namespace

bool IsPrivateAnonymous(uintptr_t start, uintptr_t end) {
  return EveryMappingOf(start, end, [](const MapsEntry& entry) {
    return entry.inode == 0 && strcmp(entry.perms, "rw-p") == 0 &&
           (entry.path[0] == '\0' || strcmp(entry.path, "[heap]") == 0);
  });
}

bool MakeRegionFile(RegionFile* file) {
  int fd = memfd_create("rpma-sim-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return false;
  struct stat status;
  if (ftruncate(fd, static_cast<off_t>(kRegionFileSize)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
      fstat(fd, &status) != 0) {
    close(fd);
    return false;
  }
  *file = RegionFile{fd, status.st_dev, status.st_ino};
  return true;
}

bool StillTheFile(int fd, uint64_t device, uint64_t inode) {
  struct stat status;
  return fstat(fd, &status) == 0 && status.st_dev == device && status.st_ino == inode;
}

bool MoveToMemfd(uintptr_t start, uintptr_t end, const RegionFile& file, uint64_t slot,
                 MovedRange* moved) {
  if (end - start > kRegionSlotSize || slot >= kRegionSlots ||
      !StillTheFile(file.fd, file.device, file.inode))
    return false;
  moved->offset = slot * kRegionSlotSize;
  moved->fd = file.fd;
  moved->device = file.device;
  moved->inode = file.inode;
  moved->locked = LockedInMemory(start, end);
  if (!MoveInto(moved->fd, moved->offset, start, end, &moved->aside)) {
    EmptySlot(*moved);  // what the copy had written
    return false;
  }
  if (moved->locked) mlock(reinterpret_cast<void*>(start), end - start);  // as a NIC pins them
  return true;
}

bool MovedParts(uintptr_t start, uintptr_t end, const MovedRange& moved, Protections* parts) {
  parts->clear();
  size_t covered = 0;
  VisitMappings(start, end, [&](const MapsEntry& entry) {
    const uintptr_t from = std::max<uintptr_t>(entry.start, start);
    const uintptr_t to = std::min<uintptr_t>(entry.stop, end);
    if (entry.inode == moved.inode && entry.perms[3] == 's' &&
        entry.offset + (from - entry.start) == moved.offset + (from - start)) {
      const int prot = (entry.perms[0] == 'r' ? PROT_READ : 0) |
                       (entry.perms[1] == 'w' ? PROT_WRITE : 0) |
                       (entry.perms[2] == 'x' ? PROT_EXEC : 0);
      parts->push_back({from, to, prot});
      covered += to - from;
    }
    return true;
  });
  return covered == end - start;
}

std::vector<std::pair<uintptr_t, uintptr_t>> NotCopiedOnFork() {
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  FILE* smaps = fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return ranges;
  char* line = nullptr;
  size_t capacity = 0;
  unsigned long start = 0, end = 0;
  // A mapping's line ("start-end perms ..."), then its fields, the last "VmFlags: rd wr ...".
  while (getline(&line, &capacity, smaps) > 0) {
    unsigned long from, to;
    if (sscanf(line, "%lx-%lx ", &from, &to) == 2) {
      start = from;
      end = to;
    } else if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line + 8, " dc") != nullptr) {
      ranges.emplace_back(start, end);
    }
  }
  free(line);
  fclose(smaps);
  return ranges;
}

void RemoveRanges(const std::vector<std::pair<uintptr_t, uintptr_t>>& ranges, Protections* parts) {
  for (const auto& range : ranges) {
    Protections kept;
    for (const ProtectedPart& part : *parts) {
      if (part.end <= range.first || part.start >= range.second) {
        kept.push_back(part);
        continue;
      }
      if (part.start < range.first) kept.push_back({part.start, range.first, part.prot});
      if (part.end > range.second) kept.push_back({range.second, part.end, part.prot});
    }
    parts->swap(kept);
  }
}

bool MoveBack(uintptr_t start, uintptr_t end, const MovedRange& moved) {
  Protections parts;
  bool back = true;
  if (MovedParts(start, end, moved, &parts)) {
    back = MakePrivate(start, end, moved.aside);
  } else {
    // The application unmapped or replaced some of it: what is left moves back piece by
    // piece, each a mapping of its own.
    if (moved.aside != MAP_FAILED) munmap(moved.aside, PageSize());
    for (const ProtectedPart& part : parts) back &= MakePrivate(part.start, part.end, MAP_FAILED);
  }
  Reprotect(parts);
  if (back) {
    Relock(parts, moved);
    // The pages are private again. A peer may still map the slot (until another region
    // takes the region's entry in its table: direct_area.h), and so may the application
    // (pages it moved or grew with mremap, which then read zeros) or a child forked
    // without fork handlers: the slot's pages go now, not with the last mapping, and no
    // other range ever takes the slot.
    EmptySlot(moved);
  }
  return back;
}

void* CopyForChild(uintptr_t start, uintptr_t end, const MovedRange& moved) {
  const size_t length = end - start;
  void* copy = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy == MAP_FAILED) return copy;
  size_t done = 0;
  while (done < length) {
    ssize_t n = pread(moved.fd, static_cast<uint8_t*>(copy) + done, length - done,
                      static_cast<off_t>(moved.offset + done));
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (!(n < 0 && errno == EINTR)) {
      munmap(copy, length);
      return MAP_FAILED;
    }
  }
  return copy;
}

void PutChildCopy(uintptr_t start, uintptr_t end, void* copy, const Protections& parts,
                  const MovedRange& moved) {
  for (const ProtectedPart& part : parts) {
    // Its own copy, or nothing at all rather than the parent's memory.
    void* slice = static_cast<uint8_t*>(copy) + (part.start - start);
    if (copy == MAP_FAILED || RawMremap(slice, part.end - part.start, part.start) == MAP_FAILED)
      munmap(reinterpret_cast<void*>(part.start), part.end - part.start);
  }
  Reprotect(parts);
  if (copy != MAP_FAILED) munmap(copy, end - start);  // the slices not put in place
  if (moved.aside != MAP_FAILED) munmap(moved.aside, PageSize());
}

}  // namespace rpma_sim
