// proc_maps.cc -- the shared-memory segments a process maps, as /proc/<pid>/maps lists them.
#include "sim/transport/proc_maps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/transport/shm_segment.h"

namespace rpma_sim {

std::vector<SegmentMapping> SegmentMappingsOf(int pid) {
  std::vector<SegmentMapping> found;
  FILE* maps = fopen(("/proc/" + std::to_string(pid) + "/maps").c_str(), "re");
  if (maps == nullptr) return found;
  const std::string marker = std::string("/dev/shm/") + ShmSegment::kNamePrefix;
  char* line = nullptr;
  size_t capacity = 0;
  // "start-end perms offset dev inode   path": the path, if any, starts after the inode.
  while (getline(&line, &capacity, maps) > 0) {
    char range[64];
    unsigned long long start = 0, offset = 0;
    int path_at = 0;
    if (sscanf(line, "%63s %*s %llx %*s %*s %n", range, &offset, &path_at) != 2 || path_at == 0 ||
        offset != 0 || sscanf(range, "%llx", &start) != 1)
      continue;
    const char* path = line + path_at;
    if (strncmp(path, marker.c_str(), marker.size()) != 0) continue;
    std::string name(path + strlen("/dev/shm/"));
    found.push_back({range, start, name.substr(0, name.find_first_of(" \n"))});
  }
  free(line);
  fclose(maps);
  return found;
}

bool MapsSegment(int pid, const std::string& name) {
  for (const SegmentMapping& mapping : SegmentMappingsOf(pid))
    if (mapping.name == name) return true;
  return false;
}

}  // namespace rpma_sim
