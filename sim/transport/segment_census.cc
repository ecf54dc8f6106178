// segment_census.cc -- the shared-memory connections of this user's processes on this host.
#include "sim/transport/segment_census.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <map>
#include <memory>

#include "sim/transport/proc_maps.h"
#include "sim/transport/process_vm.h"

namespace rpma_sim {
namespace {

// A page-aligned copy of a segment's header, as a mapping of it would be aligned.
struct HeaderCopy {
  HeaderCopy() : size((ShmSegment::HeaderSize() + 4095) / 4096 * 4096) {
    bytes.reset(aligned_alloc(4096, size));
  }
  struct Free {
    void operator()(void* bytes) const { free(bytes); }
  };
  const size_t size;
  std::unique_ptr<void, Free> bytes;
};

// Reads the header of the segment mapped at `mapping` in process `pid`: by process_vm, or
// where ptrace's rules refuse that (Yama), through /proc/<pid>/map_files (which only a
// process with CAP_CHECKPOINT_RESTORE may open), with pread: a segment its peer truncated
// reads short instead of faulting.
bool ReadMappedHeader(int pid, const SegmentMapping& mapping, ShmSegment::HeaderView* view) {
  HeaderCopy copy;
  if (copy.bytes == nullptr) return false;
  const size_t size = ShmSegment::HeaderSize();
  if (ReadFromProcess(pid, mapping.start, copy.bytes.get(), size))
    return ShmSegment::ReadHeader(copy.bytes.get(), view);
  const std::string path = "/proc/" + std::to_string(pid) + "/map_files/" + mapping.range;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t read = pread(fd, copy.bytes.get(), size, 0);
  close(fd);
  return read == static_cast<ssize_t>(size) && ShmSegment::ReadHeader(copy.bytes.get(), view);
}

bool IsPid(const char* name) {
  for (const char* c = name; *c != '\0'; ++c)
    if (!isdigit(static_cast<unsigned char>(*c))) return false;
  return *name != '\0';
}

std::string Direction(const ShmConnection& connection, ShmSegment::Side from) {
  static const char* const kSideNames[] = {"client", "server"};
  const ShmSegment::Side to =
      from == ShmSegment::kClient ? ShmSegment::kServer : ShmSegment::kClient;
  const ShmSegment::HeaderView& header = connection.header;
  std::string line = std::string(kSideNames[from]) + " " + std::to_string(header.pid[from]) +
                     " -> " + kSideNames[to] + " " + std::to_string(header.pid[to]) + ": ";
  if (header.reaches_peer[from])
    line += "by process_vm";
  else
    line += "no process_vm (mapped regions by memcpy, the rest through the " +
            std::string(kSideNames[to]) + "'s threads)";
  if (header.named_peer[to]) line += "; the " + std::string(kSideNames[to]) + " named it (Yama)";
  return line;
}

}  // namespace

std::vector<ShmConnection> FindShmConnections() {
  std::vector<ShmConnection> connections;
  std::map<std::string, size_t> listed;  // segment name -> its place in connections
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return connections;
  while (dirent* entry = readdir(proc)) {
    if (!IsPid(entry->d_name)) continue;
    const int pid = atoi(entry->d_name);
    for (const SegmentMapping& mapping : SegmentMappingsOf(pid)) {
      auto found = listed.find(mapping.name);
      if (found != listed.end() && connections[found->second].readable) continue;
      ShmConnection connection{mapping.name, pid, false, {}};
      connection.readable = ReadMappedHeader(pid, mapping, &connection.header);
      if (found == listed.end()) {
        listed.emplace(mapping.name, connections.size());
        connections.push_back(connection);
      } else if (connection.readable) {
        connections[found->second] = connection;  // read through its other side
      }
    }
  }
  closedir(proc);
  return connections;
}

std::vector<std::string> DescribeShmConnection(const ShmConnection& connection) {
  if (!connection.readable)
    return {"process " + std::to_string(connection.seen_in) + " maps segment " + connection.name +
            ": its header could not be read here (ptrace rules, or another version)"};
  if (connection.header.pid[ShmSegment::kServer] == 0)
    return {"client " + std::to_string(connection.header.pid[ShmSegment::kClient]) +
            ": offered, no server yet"};
  return {Direction(connection, ShmSegment::kClient), Direction(connection, ShmSegment::kServer)};
}

}  // namespace rpma_sim
