// file_backing.h -- whether a range of this process's memory is a shared mapping of a file
// (a file on persistent memory or /dev/shm, as registered PMem regions are), and mapping
// such a range of another process's file into this one.
//
// Another process of the same user that maps the same file shares the range's pages: it can
// write and read them with plain loads and stores, no system call per access. A direct
// write to a peer's region whose file this process can map costs a memcpy
// (direct_request.h); otherwise a process_vm copy, a system call each.
#ifndef RPMA_SIM_TRANSPORT_FILE_BACKING_H_
#define RPMA_SIM_TRANSPORT_FILE_BACKING_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <string>

namespace rpma_sim {

struct FileBacking {
  std::string path;     // absolute, as /proc/self/maps names it
  uint64_t offset = 0;  // of the first byte held (held_from) in the file
  uint64_t device = 0;  // st_dev and st_ino, to tell the file from another of that name
  uint64_t inode = 0;
  // The part of the range the file holds, from the range's start: all of it for a region in
  // a file (FindFileBacking), its whole pages for heap pages moved into one
  // (shared_pages.h); the rest is reached with process_vm.
  uint64_t held_from = 0;
  uint64_t held_length = UINT64_MAX;
};

// One line of /proc/self/maps.
struct MapsEntry {
  uint64_t start = 0;
  uint64_t stop = 0;
  char perms[5] = {};  // "rw-p", "rw-s", ...
  uint64_t offset = 0;
  unsigned int major = 0;
  unsigned int minor = 0;
  uint64_t inode = 0;
  const char* path = "";  // "" for anonymous memory; valid during the visit only
};

// Calls `visit` for each mapping of this process that overlaps [begin, end), in address
// order, until it returns false. False if /proc/self/maps cannot be read.
bool VisitMappings(uint64_t begin, uint64_t end,
                   const std::function<bool(const MapsEntry&)>& visit);

// Whether [begin, end) is mapped throughout (no hole) and `holds` is true of every mapping
// of it. False if /proc/self/maps cannot be read.
bool EveryMappingOf(uint64_t begin, uint64_t end,
                    const std::function<bool(const MapsEntry&)>& holds);

// Fills *backing if every page of [addr, addr + length) is a writable shared mapping of one
// file, contiguous in it (read from /proc/self/maps). False for private or anonymous memory,
// a deleted file, or a path longer than `max_path` bytes.
bool FindFileBacking(const void* addr, size_t length, size_t max_path, FileBacking* backing);

// A shared, writable mapping in this process of `length` bytes of the file `backing` names,
// which process `owner` published as its own, from backing.offset: only if the file there is
// the same one (device and inode), a regular file, and holds the whole range, and if a path
// through /proc is exactly /proc/<owner>/fd/<n> (a memfd of the owner's, shared_pages.h), so
// that no peer makes this process map a file or memfd of its own. Null otherwise. Unmap
// with UnmapFileRange.
uint8_t* MapFileRange(const FileBacking& backing, size_t length, int owner);
void UnmapFileRange(uint8_t* mapped, size_t length);

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_FILE_BACKING_H_
