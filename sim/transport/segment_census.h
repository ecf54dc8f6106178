// segment_census.h -- the shared-memory connections of this user's processes on this host,
// as their segments' headers tell: the two processes, and whether each reaches the other's
// memory by process_vm (and under Yama, whether it was named for it). rpma-sim-info prints
// them.
//
// A connection's segment is unlinked once the server has answered, so it is found where it
// is mapped: /proc/<pid>/maps names it ("/dev/shm/rpma-sim-... (deleted)"). Its header is
// read from that process by process_vm, which ptrace's rules allow between processes of one
// user (not under Yama, unless named), or else through /proc/<pid>/map_files (only with
// CAP_CHECKPOINT_RESTORE). A segment neither allows is listed as one that cannot be read.
#ifndef RPMA_SIM_TRANSPORT_SEGMENT_CENSUS_H_
#define RPMA_SIM_TRANSPORT_SEGMENT_CENSUS_H_

#include <string>
#include <vector>

#include "sim/transport/shm_segment.h"

namespace rpma_sim {

struct ShmConnection {
  std::string name;               // the segment's (as in /dev/shm)
  int seen_in = 0;                // the process whose mapping was read
  bool readable = false;          // whether its header could be read from here
  ShmSegment::HeaderView header;  // its sides, as its header says
};

// Every segment mapped by a process this one may look into, once each (by name), in the
// order found: read through one of its sides if either allows it.
std::vector<ShmConnection> FindShmConnections();

// "client 12 -> server 34: by process_vm", and the other way: one line per direction.
std::vector<std::string> DescribeShmConnection(const ShmConnection& connection);

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SEGMENT_CENSUS_H_
