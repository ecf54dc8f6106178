// proc_maps.h -- the shared-memory segments a process maps, as /proc/<pid>/maps lists them.
//
// Reading another process's maps needs ptrace's read mode on it (the same user), which
// Yama does not restrict. A process that is gone, or that this one may not look into, maps
// nothing as far as these functions tell.
#ifndef RPMA_SIM_TRANSPORT_PROC_MAPS_H_
#define RPMA_SIM_TRANSPORT_PROC_MAPS_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace rpma_sim {

// A segment's first mapping (file offset 0): its address range as maps and map_files spell
// it ("7f12...-7f12..."), its start, and the segment's name (as in /dev/shm, without the
// " (deleted)" an unlinked one shows).
struct SegmentMapping {
  std::string range;
  uint64_t start = 0;
  std::string name;
};

// The mappings of rpma-sim segments (/dev/shm/rpma-sim-...) in process `pid`.
std::vector<SegmentMapping> SegmentMappingsOf(int pid);

// Whether process `pid` maps the segment named `name`: a pid read from a segment's header,
// which its peer writes, is believed only so.
bool MapsSegment(int pid, const std::string& name);

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_PROC_MAPS_H_
