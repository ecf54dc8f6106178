// rpma_sim_info.cc -- rpma-sim-info: what ibv_devinfo tells of a real RDMA device, told of
// the simulated one: the device and its capabilities, every RPMA_SIM_* setting in effect
// and where it came from, the transports this host can use (and why not), the version.
//
// usage: rpma-sim-info [-h]
// It reads the settings exactly as the library does when a program starts, through the
// same functions, and probes the host: a loopback TCP connection, a shared-memory object,
// and process_vm_readv from a child process into this one (what the kernel's ptrace rules
// allow between two processes of one user). Last, the shared-memory connections of this
// user's processes, and which way each side reaches the other.
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/common/trace.h"
#include "sim/common/version.h"
#include "sim/fabric/config.h"
#include "sim/fabric/device.h"
#include "sim/fault/fault_plan.h"
#include "sim/fault/fault_rule.h"
#include "sim/fault/librpma_points.h"
#include "sim/transport/process_vm.h"
#include "sim/transport/ptrace_permit.h"
#include "sim/transport/segment_census.h"
#include "sim/transport/shm_segment.h"

namespace {

using rpma_sim::DeviceCaps;

const char* YesNo(bool value) { return value ? "yes" : "no"; }

// One setting: its variable, the value in effect, where that came from, what it means.
struct Setting {
  const char* variable;
  std::string value;
  std::string source;
  const char* meaning;
};

// Where the value of `variable` came from, given whether its text was understood (any text
// is, when no `understood` is given).
std::string Source(const char* variable, bool understood = true) {
  const char* text = getenv(variable);
  if (text == nullptr || *text == '\0') return "default";
  if (!understood)
    return std::string("environment (\"") + text + "\" not understood: default used)";
  return "environment";
}

Setting Flag(const char* variable, bool in_effect, const char* meaning) {
  const char* text = getenv(variable);
  bool parsed;
  bool understood = text == nullptr || *text == '\0' || rpma_sim::ParseFlag(text, &parsed);
  return Setting{variable, in_effect ? "1" : "0", Source(variable, understood), meaning};
}

const char* TransportName(rpma_sim::TransportKind kind) {
  switch (kind) {
    case rpma_sim::TransportKind::kAuto:
      return "auto";
    case rpma_sim::TransportKind::kInproc:
      return "inproc";
    case rpma_sim::TransportKind::kShm:
      return "shm";
    case rpma_sim::TransportKind::kTcp:
      return "tcp";
  }
  return "?";
}

// The value of a variable that takes one of `words` (any case), and whether it was understood.
Setting Choice(const char* variable, const std::string& in_effect,
               std::initializer_list<const char*> words, const char* meaning) {
  const char* text = getenv(variable);
  bool understood = text == nullptr || *text == '\0';
  for (const char* word : words) understood = understood || strcasecmp(text, word) == 0;
  return Setting{variable, in_effect, Source(variable, understood), meaning};
}

std::vector<Setting> Settings() {
  DeviceCaps caps = rpma_sim::GetDeviceCaps();
  std::vector<Setting> settings = {
      Flag("RPMA_SIM_PMEM", caps.persistent_memory, "the device's memory is persistent"),
      Flag("RPMA_SIM_EADR", caps.eadr, "a completed visibility flush is durable too (eADR)"),
      Choice("RPMA_SIM_FLUSH_SCOPE", caps.flush_scope_qp ? "qp" : "range", {"range", "qp"},
             "what librpma's portable flush makes durable"),
      Flag("RPMA_SIM_PERSISTENCE_REPORT", rpma_sim::PersistenceReportEnabled(),
           "report writes never made durable when a connection ends"),
      Flag("RPMA_SIM_NATIVE_FLUSH", caps.native_flush, "rpma_flush completes as IBV_WC_FLUSH"),
      Flag("RPMA_SIM_NATIVE_ATOMIC_WRITE", caps.native_atomic_write,
           "rpma_atomic_write completes as IBV_WC_ATOMIC_WRITE"),
      Flag("RPMA_SIM_ODP", caps.on_demand_paging, "on-demand paging is reported"),
      Choice("RPMA_SIM_TRANSPORT", TransportName(rpma_sim::GetTransport()),
             {"auto", "inproc", "shm", "tcp"}, "how a client reaches its server"),
      Flag("RPMA_SIM_SHM_PROCESS_VM", rpma_sim::ShmProcessVmEnabled(),
           "shm moves payloads of 16 KiB and more with process_vm_readv/writev"),
      Flag("RPMA_SIM_SHM_DIRECT", rpma_sim::ShmDirectEnabled(),
           "shm writes and reads execute on the target's memory without its threads"),
      Flag("RPMA_SIM_SHM_SHARE_HEAP", rpma_sim::ShmShareHeapSetting(),
           "registered heap pages move into a shared mapping for peers on the host"),
  };

  std::string rules;
  std::string error;
  std::vector<rpma_sim::FaultRule> parsed;
  bool understood = rpma_sim::FaultPlan::EnvironmentRules(&rules, &error) &&
                    rpma_sim::ParseFaultRules(rules, &parsed, &error);
  std::string in_effect;
  for (const rpma_sim::FaultRule& rule : parsed)
    in_effect += (in_effect.empty() ? "" : ";") + rule.text;
  Setting faults{"RPMA_SIM_FAULTS", in_effect.empty() ? "(none)" : in_effect,
                 Source("RPMA_SIM_FAULTS"), "fault-injection rules"};
  if (!understood) {
    faults.value = "(none: every rpma_peer_new fails with RPMA_E_INVAL)";
    faults.source = "environment (not understood: " + error + ")";
  }
  settings.push_back(faults);

  const char* seed_text = getenv("RPMA_SIM_SEED");
  bool seeded = seed_text != nullptr && *seed_text != '\0';
  Setting seed{
      "RPMA_SIM_SEED", seeded ? std::to_string(rpma_sim::FaultPlan::Get().seed()) : "(random)",
      seeded ? "environment" : "default (each run draws one and prints it when faults start)",
      "the seed of every fault-injection choice"};
  if (seeded && !rpma_sim::FaultPlan::Get().seed_understood()) {
    seed.value = "(none: every rpma_peer_new fails with RPMA_E_INVAL)";
    seed.source = std::string("environment (\"") + seed_text +
                  "\" not understood: decimal, or hexadecimal after 0x)";
  }
  settings.push_back(seed);

  int64_t point = rpma_sim::LibrpmaFaultTarget();
  const char* point_text = getenv("RPMA_FAULT_INJECTION");
  settings.push_back(Setting{"RPMA_FAULT_INJECTION", point > 0 ? std::to_string(point) : "(off)",
                             point_text != nullptr && *point_text != '\0'
                                 ? (point > 0 ? "environment" : "environment (not > 0: off)")
                                 : "default",
                             "librpma's: fail the Nth fault point passed"});

  const char* journal = getenv("RPMA_SIM_CRASH_JOURNAL");
  bool recording = journal != nullptr && *journal != '\0';
  settings.push_back(Setting{"RPMA_SIM_CRASH_JOURNAL", recording ? journal : "(off)",
                             recording ? "environment" : "default",
                             "every node records its crash points; its journal is PATH.N "
                             "(%p: the process id)"});

  const char* trace = getenv("RPMA_SIM_TRACE");
  bool traced = trace != nullptr && *trace != '\0';
  settings.push_back(Setting{"RPMA_SIM_TRACE", traced ? trace : "(off)",
                             traced ? "environment" : "default",
                             "the Chrome trace-event file (%p: the process id)"});
  bool bound_understood;
  uint64_t bound = rpma_sim::trace::MaxMegabytes(&bound_understood);
  settings.push_back(Setting{"RPMA_SIM_TRACE_MAX_MB", std::to_string(bound),
                             Source("RPMA_SIM_TRACE_MAX_MB", bound_understood),
                             "the trace file's bound, in MiB"});
  return settings;
}

// Transports -------------------------------------------------------------------------------

// A TCP connection to a listener on 127.0.0.1: what the handshake of every connection needs.
std::string ProbeTcp() {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return std::string("no: socket: ") + strerror(errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  std::string result = "yes: a connection to 127.0.0.1 works";
  int client = -1;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 1) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    result = std::string("no: cannot listen on 127.0.0.1: ") + strerror(errno);
  } else if ((client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
             connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    result = std::string("no: cannot connect to 127.0.0.1: ") + strerror(errno);
  }
  if (client >= 0) close(client);
  close(listener);
  return result;
}

// A shared-memory object as a connection's rings need one: created, sized, mapped, removed.
std::string ProbeShm() {
  std::string name = "/rpma-sim-info." + std::to_string(getpid());
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return std::string("no: shm_open: ") + strerror(errno);
  shm_unlink(name.c_str());
  std::string result;
  void* map = MAP_FAILED;
  if (ftruncate(fd, 1 << 20) != 0) {
    result = std::string("no: ftruncate: ") + strerror(errno);
  } else if ((map = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
             MAP_FAILED) {
    result = std::string("no: mmap: ") + strerror(errno);
  } else {
    munmap(map, 1 << 20);
    struct statvfs fs;
    char free_text[64] = "";
    if (statvfs("/dev/shm", &fs) == 0) {
      snprintf(free_text, sizeof(free_text), ", %.1f GiB free in /dev/shm",
               static_cast<double>(fs.f_bavail) * fs.f_frsize / (1ull << 30));
    }
    result = std::string("yes: a shared-memory object can be made and mapped") + free_text;
  }
  close(fd);
  return result;
}

// process_vm_readv by a child of this process, into this process: the direction ptrace
// rules restrict (Yama's ptrace_scope 1 allows only descendants to be read, and processes
// named with PR_SET_PTRACER). As a connection does, the child maps a segment this process
// made, this process names it (ptrace_permit.h), and then the child reads.
std::string ProbeProcessVm() {
  if (!rpma_sim::ShmProcessVmEnabled()) return "no: RPMA_SIM_SHM_PROCESS_VM=0";
  static volatile uint64_t marker = 0x5250'4d41'5349'4dULL;  // what the child must read
  std::shared_ptr<rpma_sim::ShmSegment> segment;             // without one, nothing can be named
  rpma_sim::ShmSegment::Create(rpma_sim::ShmSegment::kMinRingCapacity, &segment);
  const std::string name = segment ? segment->name() : "";
  const uint64_t nonce = segment ? segment->nonce() : 0;
  int opened[2], named[2];
  if (pipe2(opened, O_CLOEXEC) != 0 || pipe2(named, O_CLOEXEC) != 0)
    return std::string("unknown: pipe: ") + strerror(errno);
  int parent = getpid();
  pid_t child = fork();
  if (child == 0) {
    std::shared_ptr<rpma_sim::ShmSegment> mapped;
    if (segment) rpma_sim::ShmSegment::Open(name, nonce, &mapped);
    char byte = 0;
    if (write(opened[1], &byte, 1) != 1 || read(named[0], &byte, 1) != 1) _exit(255);
    uint64_t seen = 0;
    bool copied = rpma_sim::ReadFromProcess(parent, reinterpret_cast<uintptr_t>(&marker), &seen,
                                            sizeof(seen));
    _exit(!copied ? (errno != 0 ? errno : 255) : seen == marker ? 0 : 254);
  }
  close(opened[1]);
  close(named[0]);
  rpma_sim::PermitOutcome permit = rpma_sim::PermitOutcome::kNotNeeded;
  char byte;
  if (child > 0 && read(opened[0], &byte, 1) == 1) {
    if (segment) permit = rpma_sim::PtracePermits::Get().Grant(child, name);
    (void)!write(named[1], "n", 1);
  }
  close(opened[0]);
  close(named[1]);
  if (child < 0) return std::string("unknown: fork: ") + strerror(errno);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (permit == rpma_sim::PermitOutcome::kGranted) rpma_sim::PtracePermits::Get().Release(child);
  const int scope = rpma_sim::PtracePermits::YamaScope();
  const std::string yama = scope <= 0
                               ? ""
                               : " (Yama ptrace_scope=" + std::to_string(scope) + ": the peer " +
                                     rpma_sim::PermitOutcomeText(permit) +
                                     (permit == rpma_sim::PermitOutcome::kGranted
                                          ? ", which a process does for one peer process at a time)"
                                          : ")");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return "yes: another process of this user can read this one's memory" + yama;
  std::string why = WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "the probe died";
  return "no: process_vm_readv from another process: " + why + yama +
         "; payloads travel through the segment's rings instead";
}

// How a peer process on this host reaches a registered heap region, probed as a peer
// would: a child opens and maps a memfd of this process through /proc (what it does with a
// region whose whole pages moved into one; docs/transports.md). Opening it needs only
// ptrace's read mode, which Yama does not restrict, so it may work where process_vm does not.
std::string ProbeHeapRegions(bool process_vm_works) {
  const std::string otherwise = process_vm_works
                                    ? "process_vm, a system call per operation or per 64 under way"
                                    : "through the target's threads";
  if (!rpma_sim::ShmShareHeapEnabled()) {
    std::string why =
        !rpma_sim::ShmShareHeapSetting() ? "RPMA_SIM_SHM_SHARE_HEAP=0"
        : !rpma_sim::ShmDirectEnabled()
            ? "RPMA_SIM_SHM_DIRECT=0"
            : "RPMA_SIM_TRANSPORT=" + std::string(TransportName(rpma_sim::GetTransport()));
    return otherwise + " (" + why + ")";
  }
  int fd = memfd_create("rpma-sim-info", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, 4096) != 0) {
    std::string why = strerror(errno);
    if (fd >= 0) close(fd);
    return otherwise + " (memfd_create: " + why + ")";
  }
  const std::string path = "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd);
  pid_t child = fork();
  if (child == 0) {
    int peer_fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    void* map = peer_fd < 0 ? MAP_FAILED
                            : mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, peer_fd, 0);
    _exit(map != MAP_FAILED ? 0 : errno != 0 ? errno : 255);
  }
  int status = 0;
  while (child > 0 && waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  close(fd);
  if (child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return "memcpy: a region's whole pages move into a shared mapping its peer maps (a "
           "partial first or last page " +
           std::string(process_vm_works ? "by process_vm, up to 64 operations a call"
                                        : "through the target's threads") +
           ")";
  std::string why = child < 0           ? std::string("fork: ") + strerror(errno)
                    : WIFEXITED(status) ? strerror(WEXITSTATUS(status))
                                        : "the probe died";
  return otherwise + " (another process cannot map this one's memfd: " + why + ")";
}

void PrintUsage(FILE* out) {
  fprintf(out,
          "usage: rpma-sim-info [-h]\n"
          "Prints rpma-sim's simulated RDMA device and its capabilities, every RPMA_SIM_*\n"
          "setting in effect and where it came from, the transports this host can use, and\n"
          "the version (as ibv_devinfo does for a real device).\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    bool help = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0;
    PrintUsage(help ? stdout : stderr);
    return help ? 0 : 2;
  }
  rpma_sim::Device* device = rpma_sim::Device::Get();
  DeviceCaps caps = rpma_sim::GetDeviceCaps();
  printf("rpma-sim %s: the librpma %s API over a simulated RDMA fabric\n\n", rpma_sim::kVersion,
         rpma_sim::kLibrpmaApiVersion);
  printf("hca_id:\t%s\n", device->name());
  printf("\ttransport:\t\tsimulated (in process, shared memory, TCP)\n");
  printf("\tmax_qp_wr:\t\t%u\n", rpma_sim::kMaxQueuePairWorkRequests);
  printf("\tmax_cqe:\t\t%u\n", rpma_sim::kMaxCompletionQueueEntries);
  printf("\tmax_srq_wr:\t\t%u\n", rpma_sim::kMaxSharedReceiveQueueWorkRequests);
  printf("\tcapabilities (rpma_sim_set_device_cap; read by rpma_peer_new):\n");
  printf("\t\tpersistent memory:\t%s\n", YesNo(caps.persistent_memory));
  printf("\t\teADR:\t\t\t%s\n", YesNo(caps.eadr));
  printf("\t\tflush scope:\t\t%s\n", caps.flush_scope_qp ? "queue pair" : "range");
  printf("\t\tnative flush:\t\t%s\n", YesNo(caps.native_flush));
  printf("\t\tnative atomic write:\t%s\n", YesNo(caps.native_atomic_write));
  printf("\t\ton-demand paging:\t%s\n\n", YesNo(caps.on_demand_paging));

  std::vector<Setting> settings = Settings();
  size_t width = 0;
  for (const Setting& setting : settings)
    width = std::max(width, strlen(setting.variable) + 1 + setting.value.size());
  printf("settings (variable=value in effect, where it came from, what it does):\n");
  for (const Setting& setting : settings) {
    std::string assignment = std::string(setting.variable) + "=" + setting.value;
    printf("\t%-*s  %s; %s\n", static_cast<int>(width), assignment.c_str(), setting.source.c_str(),
           setting.meaning);
  }

  printf("\ntransports on this host:\n");
  printf("\tinproc:\t\tyes: a listener of the same process is called directly\n");
  printf("\ttcp:\t\t%s\n", ProbeTcp().c_str());
  printf("\tshm:\t\t%s\n", ProbeShm().c_str());
  const std::string process_vm = ProbeProcessVm();
  printf("\tprocess_vm:\t%s\n", process_vm.c_str());
  printf("\theap regions:\t%s\n", ProbeHeapRegions(process_vm.compare(0, 4, "yes:") == 0).c_str());

  // What the connections under way use, as their segments say (segment_census.h).
  const std::vector<rpma_sim::ShmConnection> connections = rpma_sim::FindShmConnections();
  printf("\nshared-memory connections of this user on this host: %zu\n", connections.size());
  for (const rpma_sim::ShmConnection& connection : connections)
    for (const std::string& line : rpma_sim::DescribeShmConnection(connection))
      printf("\t%s\n", line.c_str());
  return 0;
}
