// rpma_sim_scale.cc -- many connections at once: a server accepts N connections, a client
// opens them (one after another, or several under way at once), writes 8 bytes on each, and
// disconnects them all; each side then checks the data and prints one line: the connect
// rate (the client's from its first connect, the server's from the first request it took),
// the CPU time its process spent per connection while connecting (all threads, user and
// system: a figure that another load on the machine changes far less than the rate), the
// threads and fds its process had with every connection open, its peak RSS and the
// /dev/shm the run took.
//
// usage: rpma-sim-scale server|client|both ADDR PORT N [--max-sim-threads K] [--window W]
//   both: the two sides as two threads of one process (in process unless
//         RPMA_SIM_TRANSPORT says otherwise).
//   --max-sim-threads K: exit 1 if, with every connection open, the process has more than
//         K threads besides the application's own (1, or 2 for both).
//   --window W (client, both): the client keeps up to W connects under way
//         (rpma_conn_req_connect is asynchronous; rdma-core's cmtime puts all of its connects
//         in flight at once); 1 (the default) waits for each connection's ESTABLISHED before
//         the next connect: its rate is then one over a connect's latency. At most 512
//         (kMaxWindow).
// Only the public headers: the same program measures the simulator and a real librpma.
#include <dirent.h>
#include <errno.h>
#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

namespace {

// The most connects the client keeps under way: the requests a server has not taken yet stay
// below the simulator's listen backlog (1024, as net.rdma_ucm.max_backlog), so none is
// rejected for it.
constexpr int kMaxWindow = 512;

// Reads `text` as a whole decimal number from `low` to `high` into *value; false (said on
// stderr, naming `what`) otherwise.
bool ParseNumber(const char* what, const char* text, long low, long high, int* value) {
  char* end = nullptr;
  errno = 0;
  long number = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || number < low || number > high) {
    fprintf(stderr, "%s must be a number from %ld to %ld, not \"%s\"\n", what, low, high, text);
    return false;
  }
  *value = static_cast<int>(number);
  return true;
}

[[noreturn]] void Fail(const char* side, const char* what, int ret) {
  fprintf(stderr, "%s: %s failed: %s\n", side, what, rpma_err_2str(ret));
  exit(1);
}

#define CHECK(side, call)                   \
  do {                                      \
    int ret_ = (call);                      \
    if (ret_ != 0) Fail(side, #call, ret_); \
  } while (0)

// A value of /proc/self/status ("Threads", "VmHWM" in kB, ...).
long ProcStatus(const char* key) {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long value = -1;
  size_t key_len = strlen(key);
  while (fgets(line, sizeof(line), status) != nullptr) {
    if (strncmp(line, key, key_len) == 0 && line[key_len] == ':') {
      value = strtol(line + key_len + 1, nullptr, 10);
      break;
    }
  }
  fclose(status);
  return value;
}

long OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  long count = -3;  // ".", ".." and the directory's own fd
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

// Bytes used in /dev/shm.
long long ShmUsed() {
  struct statvfs fs;
  if (statvfs("/dev/shm", &fs) != 0) return -1;
  return static_cast<long long>(fs.f_blocks - fs.f_bfree) * static_cast<long long>(fs.f_frsize);
}

struct Config {
  const char* addr;
  const char* port;
  int connections;
  int max_sim_threads = -1;
  int window = 1;  // connects under way at once on the client
  int app_threads = 1;
  long long shm_before = 0;
};

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void ExpectEvent(const char* side, rpma_conn* conn, rpma_conn_event expected) {
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  CHECK(side, rpma_conn_next_event(conn, &event));
  if (event != expected) {
    fprintf(stderr, "%s: %s instead of %s\n", side, rpma_utils_conn_event_2str(event),
            rpma_utils_conn_event_2str(expected));
    exit(1);
  }
}

rpma_peer* NewPeer(const char* side, const char* addr, rpma_util_ibv_context_type type) {
  ibv_context* device = nullptr;
  CHECK(side, rpma_utils_get_ibv_context(addr, type, &device));
  rpma_peer* peer = nullptr;
  CHECK(side, rpma_peer_new(device, &peer));
  return peer;
}

// CPU time this process used so far (all threads, user and system), in microseconds.
long long CpuMicros() {
  rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  auto micros = [](const timeval& t) { return t.tv_sec * 1000000LL + t.tv_usec; };
  return micros(usage.ru_utime) + micros(usage.ru_stime);
}

// What a side had with every connection open.
struct Usage {
  long threads;
  long fds;
  long long shm_bytes;       // of /dev/shm, more than at the start
  long long connect_cpu_us;  // CPU time spent while connecting
};

Usage MeasureUsage(const Config& config, long long cpu_at_start_us) {
  return Usage{ProcStatus("Threads"), OpenFds(), ShmUsed() - config.shm_before,
               CpuMicros() - cpu_at_start_us};
}

// Prints the side's line; false if it had more simulator threads than allowed.
bool Report(const char* side, const Config& config, double connect_s, double total_s,
            const Usage& usage) {
  long threads = usage.threads, fds = usage.fds;
  long sim_threads = threads - config.app_threads;
  printf(
      "%s: %d connections, connect %.0f/s (CPU %.0f us each), total %.2f s, threads %ld "
      "(simulator %ld), fds %ld, peak RSS %ld MiB, /dev/shm +%lld MiB\n",
      side, config.connections, config.connections / connect_s,
      static_cast<double>(usage.connect_cpu_us) / config.connections, total_s, threads, sim_threads,
      fds, ProcStatus("VmHWM") / 1024, usage.shm_bytes / (1 << 20));
  fflush(stdout);
  if (config.max_sim_threads >= 0 && sim_threads > config.max_sim_threads) {
    fprintf(stderr, "%s: %ld simulator threads with every connection open; at most %d allowed\n",
            side, sim_threads, config.max_sim_threads);
    return false;
  }
  return true;
}

// The server: one 8-byte slot per connection, its index sent with the MR's descriptor.
int Server(const Config& config, const std::function<void()>& listening) {
  const char* side = "server";
  rpma_peer* peer = NewPeer(side, config.addr, RPMA_UTIL_IBV_CONTEXT_LOCAL);
  std::vector<uint64_t> slots(config.connections, 0);
  rpma_mr_local* mr = nullptr;
  CHECK(side, rpma_mr_reg(peer, slots.data(), slots.size() * sizeof(uint64_t),
                          RPMA_MR_USAGE_WRITE_DST, &mr));
  size_t desc_size = 0;
  CHECK(side, rpma_mr_get_descriptor_size(mr, &desc_size));
  rpma_ep* ep = nullptr;
  CHECK(side, rpma_ep_listen(peer, config.addr, config.port, &ep));
  printf("server: listening on %s:%s\n", config.addr, config.port);
  fflush(stdout);
  listening();

  std::vector<rpma_conn*> conns(config.connections, nullptr);
  // Both set when the first request is taken (N is at least 1).
  std::chrono::steady_clock::time_point start;
  long long cpu_at_start_us = 0;
  std::vector<uint8_t> pdata_bytes(desc_size + sizeof(uint32_t));
  CHECK(side, rpma_mr_get_descriptor(mr, pdata_bytes.data()));
  for (int i = 0; i < config.connections; ++i) {
    rpma_conn_req* req = nullptr;
    CHECK(side, rpma_ep_next_conn_req(ep, nullptr, &req));
    if (i == 0) {
      // Timed from here: the wait for a client that has not started yet is not connecting.
      start = std::chrono::steady_clock::now();
      cpu_at_start_us = CpuMicros();
    }
    uint32_t slot = static_cast<uint32_t>(i);
    memcpy(pdata_bytes.data() + desc_size, &slot, sizeof(slot));
    rpma_conn_private_data pdata = {pdata_bytes.data(), static_cast<uint8_t>(pdata_bytes.size())};
    CHECK(side, rpma_conn_req_connect(&req, &pdata, &conns[i]));
    ExpectEvent(side, conns[i], RPMA_CONN_ESTABLISHED);
  }
  double connect_s = Seconds(start);
  Usage usage = MeasureUsage(config, cpu_at_start_us);
  for (rpma_conn*& conn : conns) {
    ExpectEvent(side, conn, RPMA_CONN_CLOSED);
    CHECK(side, rpma_conn_disconnect(conn));
    CHECK(side, rpma_conn_delete(&conn));
  }
  double total_s = Seconds(start);
  int wrong = 0;
  for (int i = 0; i < config.connections; ++i) wrong += slots[i] != static_cast<uint64_t>(i) + 1;
  if (wrong != 0) fprintf(stderr, "server: %d slots do not hold their client's write\n", wrong);
  CHECK(side, rpma_ep_shutdown(&ep));
  CHECK(side, rpma_mr_dereg(&mr));
  CHECK(side, rpma_peer_delete(&peer));
  bool ok = Report(side, config, connect_s, total_s, usage);
  return wrong == 0 && ok ? 0 : 1;
}

int Client(const Config& config) {
  const char* side = "client";
  rpma_peer* peer = NewPeer(side, config.addr, RPMA_UTIL_IBV_CONTEXT_REMOTE);
  uint64_t values[1] = {0};
  rpma_mr_local* src = nullptr;
  CHECK(side, rpma_mr_reg(peer, values, sizeof(values), RPMA_MR_USAGE_WRITE_SRC, &src));
  std::vector<rpma_conn*> conns(config.connections, nullptr);
  std::vector<rpma_mr_remote*> remotes(config.connections, nullptr);
  std::vector<uint32_t> slots(config.connections, 0);
  auto start = std::chrono::steady_clock::now();
  long long cpu_at_start_us = CpuMicros();
  int issued = 0;
  for (int i = 0; i < config.connections; ++i) {
    // Up to `window` connects under way: each issued before the oldest is established.
    for (; issued < config.connections && issued < i + config.window; ++issued) {
      rpma_conn_req* req = nullptr;
      CHECK(side, rpma_conn_req_new(peer, config.addr, config.port, nullptr, &req));
      CHECK(side, rpma_conn_req_connect(&req, nullptr, &conns[issued]));
    }
    ExpectEvent(side, conns[i], RPMA_CONN_ESTABLISHED);
    rpma_conn_private_data pdata;
    CHECK(side, rpma_conn_get_private_data(conns[i], &pdata));
    if (pdata.len < sizeof(uint32_t)) Fail(side, "the server's private data", RPMA_E_UNKNOWN);
    size_t desc_size = pdata.len - sizeof(uint32_t);
    CHECK(side, rpma_mr_remote_from_descriptor(pdata.ptr, desc_size, &remotes[i]));
    memcpy(&slots[i], static_cast<const char*>(pdata.ptr) + desc_size, sizeof(uint32_t));
  }
  double connect_s = Seconds(start);
  Usage usage = MeasureUsage(config, cpu_at_start_us);
  for (int i = 0; i < config.connections; ++i) {
    // The write must complete before values[0] changes for the next connection.
    values[0] = static_cast<uint64_t>(slots[i]) + 1;
    CHECK(side, rpma_write(conns[i], remotes[i], slots[i] * sizeof(uint64_t), src, 0,
                           sizeof(uint64_t), RPMA_F_COMPLETION_ALWAYS, nullptr));
    rpma_cq* cq = nullptr;
    CHECK(side, rpma_conn_get_cq(conns[i], &cq));
    CHECK(side, rpma_cq_wait(cq));
    ibv_wc wc;
    CHECK(side, rpma_cq_get_wc(cq, 1, &wc, nullptr));
    if (wc.status != IBV_WC_SUCCESS) Fail(side, ibv_wc_status_str(wc.status), RPMA_E_UNKNOWN);
  }
  for (int i = 0; i < config.connections; ++i) {
    CHECK(side, rpma_conn_disconnect(conns[i]));
    ExpectEvent(side, conns[i], RPMA_CONN_CLOSED);
    CHECK(side, rpma_conn_delete(&conns[i]));
    CHECK(side, rpma_mr_remote_delete(&remotes[i]));
  }
  double total_s = Seconds(start);
  CHECK(side, rpma_mr_dereg(&src));
  CHECK(side, rpma_peer_delete(&peer));
  return Report(side, config, connect_s, total_s, usage) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s server|client|both ADDR PORT N [--max-sim-threads K] [--window W]\n",
            argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  Config config{argv[2], argv[3], 0};
  if (!ParseNumber("N", argv[4], 1, 1000000, &config.connections)) return 2;
  for (int i = 5; i < argc; i += 2) {
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (strcmp(argv[i], "--max-sim-threads") == 0) {
      if (!ParseNumber(argv[i], value, 0, 1000000, &config.max_sim_threads)) return 2;
    } else if (strcmp(argv[i], "--window") == 0) {
      if (!ParseNumber(argv[i], value, 1, kMaxWindow, &config.window)) return 2;
    } else {
      fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (mode == "server" && config.window != 1) {
    fprintf(stderr, "--window is the client's: the server takes requests as they come\n");
    return 2;
  }
  config.shm_before = ShmUsed();
  if (mode == "server") return Server(config, [] {});
  if (mode == "client") return Client(config);
  if (mode != "both") {
    fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  config.app_threads = 2;
  int server_status = 1;
  std::promise<void> listening;
  std::thread server([&] { server_status = Server(config, [&] { listening.set_value(); }); });
  listening.get_future().wait();  // a client that came earlier would be rejected
  int client_status = Client(config);
  server.join();
  return server_status == 0 && client_status == 0 ? 0 : 1;
}
