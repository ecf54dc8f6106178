// moved_pages.cc -- this process's mappings as tests of registered heap memory see them.
#include "tests/common/moved_pages.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

bool PagesMoveHere() {
  const char* transport = getenv("RPMA_SIM_TRANSPORT");
  const char* share = getenv("RPMA_SIM_SHM_SHARE_HEAP");
  if (share != nullptr && strcmp(share, "0") == 0) return false;
  return transport == nullptr ||
         (strcmp(transport, "tcp") != 0 && strcmp(transport, "inproc") != 0);
}

std::string MappingOf(const void* address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  FILE* maps = fopen("/proc/self/maps", "re");
  if (maps == nullptr) return "";
  char line[4096];
  std::string found;
  while (fgets(line, sizeof(line), maps) != nullptr) {
    unsigned long long start, end;
    if (sscanf(line, "%llx-%llx", &start, &end) == 2 && start <= at && at < end) {
      found = line;
      break;
    }
  }
  fclose(maps);
  return found;
}

bool Moved(const void* address) {
  return MappingOf(address).find("memfd:rpma-sim-region") != std::string::npos;
}

unsigned long long InodeAt(const void* address) {
  unsigned long long inode = 0;
  sscanf(MappingOf(address).c_str(), "%*s %*s %*s %*s %llu", &inode);
  return inode;
}

int FdOfInode(unsigned long long inode) {
  struct stat status;
  for (int fd = 0; fd < 65536; ++fd)
    if (fstat(fd, &status) == 0 && status.st_ino == inode) return fd;
  return -1;
}

char* NewPages(size_t pages, uint8_t fill) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* area =
      mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return nullptr;
  memset(area, fill, pages * page);
  return static_cast<char*>(area);
}

bool AllBytes(const void* address, size_t length, uint8_t value) {
  const uint8_t* bytes = static_cast<const uint8_t*>(address);
  for (size_t i = 0; i < length; ++i)
    if (bytes[i] != value) return false;
  return true;
}
