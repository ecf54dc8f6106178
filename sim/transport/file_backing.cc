// file_backing.cc -- /proc/self/maps lookups and mappings of a peer's region file.
#include "sim/transport/file_backing.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace rpma_sim {
namespace {

uint64_t PageSize() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Whether `path` is exactly /proc/<owner>/fd/<n>.
bool IsOwnersDescriptor(const std::string& path, int owner) {
  const std::string prefix = "/proc/" + std::to_string(owner) + "/fd/";
  if (owner <= 0 || path.compare(0, prefix.size(), prefix) != 0 || path.size() == prefix.size())
    return false;
  return std::all_of(path.begin() + static_cast<long>(prefix.size()), path.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

bool VisitMappings(uint64_t begin, uint64_t end,
                   const std::function<bool(const MapsEntry&)>& visit) {
  FILE* maps = fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  char line[4096 + 256];
  while (fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long long start, stop, offset, inode;
    MapsEntry entry;
    int path_at = 0;
    if (sscanf(line, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &stop, entry.perms, &offset,
               &entry.major, &entry.minor, &inode, &path_at) < 7)
      continue;
    if (stop <= begin) continue;
    if (start >= end) break;
    line[strcspn(line, "\n")] = '\0';
    entry.start = start;
    entry.stop = stop;
    entry.offset = offset;
    entry.inode = inode;
    entry.path = line + path_at;
    if (!visit(entry)) break;
  }
  fclose(maps);
  return true;
}

bool EveryMappingOf(uint64_t begin, uint64_t end,
                    const std::function<bool(const MapsEntry&)>& holds) {
  uint64_t covered = begin;  // [begin, covered) is mapped and holds
  bool ok = true;
  const bool read = VisitMappings(begin, end, [&](const MapsEntry& entry) {
    ok = entry.start <= covered && holds(entry);
    covered = entry.stop;
    return ok && covered < end;
  });
  return read && ok && covered >= end;
}

bool FindFileBacking(const void* addr, size_t length, size_t max_path, FileBacking* backing) {
  const uint64_t begin = reinterpret_cast<uintptr_t>(addr);
  const uint64_t end = begin + length;
  if (length == 0 || end < begin) return false;
  uint64_t covered = begin;  // [begin, covered) is known to be one file, contiguous in it
  bool found = true;
  bool read = VisitMappings(begin, end, [&](const MapsEntry& entry) {
    if (entry.start > covered || entry.perms[1] != 'w' || entry.perms[3] != 's' ||
        entry.inode == 0) {
      found = false;  // a hole, or memory that is not a writable shared file mapping
      return false;
    }
    const std::string path = entry.path;
    uint64_t file_offset = entry.offset + (covered - entry.start);
    if (covered == begin) {
      if (path.empty() || path[0] != '/' || path.size() > max_path ||
          path.find(" (deleted)") != std::string::npos) {
        found = false;
        return false;
      }
      backing->path = path;
      backing->offset = file_offset;
      backing->device = makedev(entry.major, entry.minor);
      backing->inode = entry.inode;
    } else if (path != backing->path || entry.inode != backing->inode ||
               file_offset != backing->offset + (covered - begin)) {
      found = false;  // another file, or not contiguous in it
      return false;
    }
    covered = entry.stop;
    return covered < end;
  });
  if (!read || !found || covered < end) return false;
  // /proc/self/maps gives the device as the kernel encodes it; stat's st_dev is what the
  // peer compares with: take it from the file.
  struct stat status;
  if (stat(backing->path.c_str(), &status) != 0 || status.st_ino != backing->inode) return false;
  backing->device = status.st_dev;
  return true;
}

uint8_t* MapFileRange(const FileBacking& backing, size_t length, int owner) {
  // A region moved into a memfd (shared_pages.h) is reached through the owner's fd, a link
  // in /proc, and only that way; any other path must not be a symbolic link.
  const bool through_proc = backing.path.compare(0, 6, "/proc/") == 0;
  if (through_proc && !IsOwnersDescriptor(backing.path, owner)) return nullptr;
  // Not blocking in open: a path a peer chose may name a FIFO or a device.
  int fd =
      open(backing.path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK | (through_proc ? 0 : O_NOFOLLOW));
  if (fd < 0) return nullptr;
  struct stat status;
  uint64_t page_offset = backing.offset % PageSize();
  uint64_t start = backing.offset - page_offset;
  bool same = fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
              status.st_dev == backing.device && status.st_ino == backing.inode &&
              static_cast<uint64_t>(status.st_size) >= backing.offset + length;
  void* mapped = MAP_FAILED;
  if (same)
    mapped = mmap(nullptr, length + page_offset, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                  static_cast<off_t>(start));
  close(fd);
  if (mapped == MAP_FAILED) return nullptr;
  return static_cast<uint8_t*>(mapped) + page_offset;
}

void UnmapFileRange(uint8_t* mapped, size_t length) {
  uint64_t page_offset = reinterpret_cast<uintptr_t>(mapped) % PageSize();
  munmap(mapped - page_offset, length + page_offset);
}

}  // namespace rpma_sim
