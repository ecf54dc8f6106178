// rpma_sim_perf.cc -- a perftest-style latency and bandwidth tool (like ib_write_lat and
// ib_write_bw) written against <librpma.h> alone, so it runs on rpma-sim and on real librpma.
//
//   rpma-sim-perf TEST server ADDR PORT [options]   serves one client, exits when it leaves
//   rpma-sim-perf TEST client ADDR PORT [options]   runs TEST against that server, prints a line
//   rpma-sim-perf TEST both   ADDR PORT [options]   a server thread and the client in one process
//
// The client tells the server which test and size it runs in the connection's private data;
// the server registers a buffer of that size and answers with the buffer's descriptor (and
// its peer configuration) as private data. Latency: one signalled operation at a time, from
// the post until its completion is polled (busy polling rpma_cq_get_wc); send_lat is a
// ping-pong and reports half the round trip, as perftest does. Bandwidth: a window of
// unsignalled operations with every 16th signalled, at most DEPTH outstanding (sq_size).
#include <errno.h>
#include <fcntl.h>
#include <librpma.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/perf_options.h"

namespace rpma_sim_perf {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kMagic = 0x52505346;  // "RPSF"

// What the client tells the server (connection private data; 56 bytes at most).
struct Request {
  uint32_t magic;
  uint8_t test;
  uint8_t persistent;
  uint16_t depth;
  uint64_t size;
  uint64_t region;  // the server registers max(size, region) bytes
};

// What the server answers with: its buffer's descriptor and its peer configuration.
struct Reply {
  uint8_t mr_desc_size;
  uint8_t pcfg_desc_size;
  char descriptors[62];
};

void Check(int ret, const char* call) {
  if (ret != 0) Die("%s failed: %s", call, rpma_err_2str(ret));
}

void ExpectEvent(rpma_conn* conn, rpma_conn_event expected, const char* side) {
  rpma_conn_event event;
  Check(rpma_conn_next_event(conn, &event), "rpma_conn_next_event");
  if (event != expected) {
    Die("%s: expected %s, got %s", side, rpma_utils_conn_event_2str(expected),
        rpma_utils_conn_event_2str(event));
  }
}

void CheckWc(const ibv_wc& wc, const char* side) {
  if (wc.status != IBV_WC_SUCCESS) {
    Die("%s: completion failed: %s (opcode %d)", side, ibv_wc_status_str(wc.status), wc.opcode);
  }
}

constexpr int kUsageAll =
    RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV;

// A buffer of at least `size` bytes, zeroed: page-aligned heap memory, or (`in_file`) a shared
// mapping of a file in /dev/shm, as registered persistent memory is a mapping of a file.
struct Buffer {
  char* data = nullptr;
  size_t length = 0;
  std::string file;  // removed by FreeBuffer
};

Buffer AllocateBuffer(size_t size, bool in_file) {
  Buffer buffer;
  buffer.length = std::max<size_t>(size, 64);
  if (!in_file) {
    void* memory = nullptr;
    if (posix_memalign(&memory, 4096, buffer.length) != 0) Die("out of memory");
    memset(memory, 0, buffer.length);
    buffer.data = static_cast<char*>(memory);
    return buffer;
  }
  static int files = 0;
  buffer.file =
      "/dev/shm/rpma-sim-perf-" + std::to_string(getpid()) + "-" + std::to_string(files++);
  int fd = open(buffer.file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(buffer.length)) != 0) {
    Die("cannot make %s: %s", buffer.file.c_str(), strerror(errno));
  }
  void* memory = mmap(nullptr, buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) Die("cannot map %s: %s", buffer.file.c_str(), strerror(errno));
  buffer.data = static_cast<char*>(memory);
  return buffer;
}

void FreeBuffer(Buffer& buffer) {
  if (buffer.file.empty()) {
    free(buffer.data);
  } else {
    munmap(buffer.data, buffer.length);
    unlink(buffer.file.c_str());
  }
  buffer.data = nullptr;
}

rpma_conn_cfg* NewConnCfg(int depth) {
  rpma_conn_cfg* cfg;
  Check(rpma_conn_cfg_new(&cfg), "rpma_conn_cfg_new");
  Check(rpma_conn_cfg_set_sq_size(cfg, depth), "rpma_conn_cfg_set_sq_size");
  Check(rpma_conn_cfg_set_rq_size(cfg, depth), "rpma_conn_cfg_set_rq_size");
  Check(rpma_conn_cfg_set_cq_size(cfg, 2 * depth), "rpma_conn_cfg_set_cq_size");
  return cfg;
}

// ---------------------------------------------------------------------------------------------
// Server

// Hands "listening" from the server thread to the client in `both` mode.
struct Listening {
  std::mutex mutex;
  std::condition_variable cv;
  bool ready = false;
};

// Busy-polls (or, with `wait`, sleeps in rpma_cq_wait) for completions: in a send test reposts
// every receive and answers every ping of send_lat (in a one-sided test none come). Returns
// when the client has disconnected.
void ServeSends(rpma_conn* conn, rpma_mr_local* mr, const Request& request, bool wait) {
  rpma_cq* cq;
  Check(rpma_conn_get_cq(conn, &cq), "rpma_conn_get_cq");
  int event_fd;
  Check(rpma_conn_get_event_fd(conn, &event_fd), "rpma_conn_get_event_fd");
  int flags = fcntl(event_fd, F_GETFL);
  if (flags < 0 || fcntl(event_fd, F_SETFL, flags | O_NONBLOCK) != 0) Die("fcntl failed");

  const size_t size = request.size;
  long replies = 0;
  ibv_wc wcs[16];
  for (long idle = 0;;) {
    int got = 0;
    int ret = rpma_cq_get_wc(cq, 16, wcs, &got);
    if (ret == RPMA_E_NO_COMPLETION) {
      // Every few thousand empty polls (or whenever a wait is cut short), look for CLOSED.
      if (wait || ++idle % 4096 == 0) {
        rpma_conn_event event;
        ret = rpma_conn_next_event(conn, &event);
        if (ret == 0 && (event == RPMA_CONN_CLOSED || event == RPMA_CONN_LOST)) return;
        if (ret != 0 && ret != RPMA_E_NO_EVENT) Check(ret, "rpma_conn_next_event");
      }
      if (wait) {
        // Wakes on the next completion; a disconnect flushes the posted receives, which wakes
        // it too.
        ret = rpma_cq_wait(cq);
        if (ret != 0 && ret != RPMA_E_NO_COMPLETION) Check(ret, "rpma_cq_wait");
      }
      continue;
    }
    Check(ret, "rpma_cq_get_wc");
    idle = 0;
    for (int i = 0; i < got; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status == IBV_WC_WR_FLUSH_ERR) {
        // The connection is going away: wait for its event.
        rpma_conn_event event;
        while ((ret = rpma_conn_next_event(conn, &event)) == RPMA_E_NO_EVENT) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return;
      }
      CheckWc(wc, "server");
      if (wc.opcode != IBV_WC_RECV) continue;  // the completion of a signalled reply
      if (request.test == kSendLat) {
        bool signaled = ++replies % kSignalEvery == 0;
        Check(rpma_send(conn, mr, 0, size,
                        signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR, nullptr),
              "rpma_send");
      }
      Check(rpma_recv(conn, mr, 0, size, nullptr), "rpma_recv");
    }
  }
}

void RunServer(const Options& options, Listening* listening) {
  ibv_context* ctx;
  Check(rpma_utils_get_ibv_context(options.addr.c_str(), RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx),
        "rpma_utils_get_ibv_context");
  rpma_peer* peer;
  Check(rpma_peer_new(ctx, &peer), "rpma_peer_new");
  rpma_ep* ep;
  Check(rpma_ep_listen(peer, options.addr.c_str(), options.port.c_str(), &ep), "rpma_ep_listen");
  printf("server: listening on %s:%s\n", options.addr.c_str(), options.port.c_str());
  fflush(stdout);
  if (listening != nullptr) {
    std::lock_guard<std::mutex> lock(listening->mutex);
    listening->ready = true;
    listening->cv.notify_all();
  }

  // The request says what the client will run; the server follows it.
  rpma_conn_cfg* cfg = NewConnCfg(options.depth);
  rpma_conn_req* req;
  Check(rpma_ep_next_conn_req(ep, cfg, &req), "rpma_ep_next_conn_req");
  rpma_conn_private_data pdata;
  Check(rpma_conn_req_get_private_data(req, &pdata), "rpma_conn_req_get_private_data");
  Request request;
  if (pdata.len < sizeof(request)) Die("server: the client sent no rpma-sim-perf request");
  memcpy(&request, pdata.ptr, sizeof(request));
  if (request.magic != kMagic || request.test >= kTestCount || request.size == 0) {
    Die("server: the client sent a malformed request");
  }
  Test test = static_cast<Test>(request.test);
  if (test != options.test) {
    fprintf(stderr, "server: the client runs %s (not %s); serving %s\n", kTestNames[test],
            kTestNames[options.test], kTestNames[test]);
  }
  if (request.depth != options.depth) {
    // Match the client's queue depth: rebuild the cfg for this connection.
    Check(rpma_conn_cfg_delete(&cfg), "rpma_conn_cfg_delete");
    cfg = NewConnCfg(request.depth);
  }

  const size_t region = std::max<uint64_t>(request.size, request.region);
  Buffer buffer = AllocateBuffer(region, options.file_buffers);
  rpma_mr_local* mr;
  Check(rpma_mr_reg(peer, buffer.data, region, kUsageAll, &mr), "rpma_mr_reg");
  rpma_peer_cfg* pcfg;
  Check(rpma_peer_cfg_new(&pcfg), "rpma_peer_cfg_new");
  Check(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true), "set_direct_write_to_pmem");

  Reply reply{};
  size_t mr_size, pcfg_size;
  Check(rpma_mr_get_descriptor_size(mr, &mr_size), "rpma_mr_get_descriptor_size");
  Check(rpma_peer_cfg_get_descriptor_size(pcfg, &pcfg_size), "get_descriptor_size");
  if (mr_size + pcfg_size > sizeof(reply.descriptors)) Die("descriptors too large");
  reply.mr_desc_size = static_cast<uint8_t>(mr_size);
  reply.pcfg_desc_size = static_cast<uint8_t>(pcfg_size);
  Check(rpma_mr_get_descriptor(mr, reply.descriptors), "rpma_mr_get_descriptor");
  Check(rpma_peer_cfg_get_descriptor(pcfg, reply.descriptors + mr_size),
        "rpma_peer_cfg_get_descriptor");

  // A send test needs receives before the client's first message.
  if (IsSend(test)) Check(rpma_conn_req_recv(req, mr, 0, request.size, nullptr), "req_recv");
  rpma_conn_private_data answer{&reply, sizeof(reply)};
  rpma_conn* conn;
  Check(rpma_conn_req_connect(&req, &answer, &conn), "rpma_conn_req_connect");
  if (IsSend(test)) {
    for (int i = 1; i < request.depth; ++i) {
      Check(rpma_recv(conn, mr, 0, request.size, nullptr), "rpma_recv");
    }
  }
  ExpectEvent(conn, RPMA_CONN_ESTABLISHED, "server");

  if (IsSend(test) || options.server_busy) {
    ServeSends(conn, mr, request, !options.server_busy);
  } else {
    // One-sided tests need nothing from the server's application: wait for the goodbye.
    rpma_conn_event event;
    Check(rpma_conn_next_event(conn, &event), "rpma_conn_next_event");
    if (event != RPMA_CONN_CLOSED && event != RPMA_CONN_LOST) {
      Die("server: unexpected event %s", rpma_utils_conn_event_2str(event));
    }
  }
  rpma_conn_disconnect(conn);  // already closed by the client; returns 0
  Check(rpma_conn_delete(&conn), "rpma_conn_delete");
  Check(rpma_mr_dereg(&mr), "rpma_mr_dereg");
  Check(rpma_peer_cfg_delete(&pcfg), "rpma_peer_cfg_delete");
  Check(rpma_conn_cfg_delete(&cfg), "rpma_conn_cfg_delete");
  Check(rpma_ep_shutdown(&ep), "rpma_ep_shutdown");
  Check(rpma_peer_delete(&peer), "rpma_peer_delete");
  FreeBuffer(buffer);
  printf("server: the client ran %s %zu B and left\n", kTestNames[test],
         static_cast<size_t>(request.size));
  fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// Client

struct Client {
  rpma_conn* conn = nullptr;
  rpma_cq* cq = nullptr;
  rpma_mr_local* mr = nullptr;
  rpma_mr_remote* remote = nullptr;
  int flush_type = RPMA_FLUSH_TYPE_VISIBILITY;

  // Busy-polls one successful completion; returns its opcode.
  ibv_wc_opcode PollOne() {
    ibv_wc wc;
    int ret;
    while ((ret = rpma_cq_get_wc(cq, 1, &wc, nullptr)) == RPMA_E_NO_COMPLETION) {
    }
    Check(ret, "rpma_cq_get_wc");
    CheckWc(wc, "client");
    return wc.opcode;
  }
};

double Percentile(std::vector<double>& sorted, double fraction) {
  return sorted[static_cast<size_t>(fraction * (sorted.size() - 1))];
}

void RunLatency(Client& c, const Options& options) {
  const size_t size = options.size;
  long sends = 0;
  // One operation, until its completion (send_lat: until the reply's) is polled.
  auto once = [&] {
    switch (options.test) {
      case kWriteLat:
        Check(rpma_write(c.conn, c.remote, 0, c.mr, 0, size, RPMA_F_COMPLETION_ALWAYS, nullptr),
              "rpma_write");
        c.PollOne();
        break;
      case kReadLat:
        Check(rpma_read(c.conn, c.mr, 0, c.remote, 0, size, RPMA_F_COMPLETION_ALWAYS, nullptr),
              "rpma_read");
        c.PollOne();
        break;
      case kFlushLat:
        Check(rpma_write(c.conn, c.remote, 0, c.mr, 0, size, RPMA_F_COMPLETION_ON_ERROR, nullptr),
              "rpma_write");
        Check(rpma_flush(c.conn, c.remote, 0, size, static_cast<rpma_flush_type>(c.flush_type),
                         RPMA_F_COMPLETION_ALWAYS, nullptr),
              "rpma_flush");
        c.PollOne();
        break;
      case kSendLat: {
        bool signaled = ++sends % kSignalEvery == 0;
        Check(rpma_send(c.conn, c.mr, 0, size,
                        signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR, nullptr),
              "rpma_send");
        while (c.PollOne() != IBV_WC_RECV) {
        }  // a signalled send's completion may come first
        break;
      }
      default:
        break;
    }
  };
  auto post_receive = [&] {
    if (options.test == kSendLat) Check(rpma_recv(c.conn, c.mr, 0, size, nullptr), "rpma_recv");
  };

  for (long i = 0; i < options.warmup; ++i) {
    post_receive();
    once();
  }
  std::vector<double> samples;
  samples.reserve(options.iterations);
  for (long i = 0; i < options.iterations; ++i) {
    post_receive();
    auto start = Clock::now();
    once();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  // A ping-pong reports half of its round trip, as perftest does.
  double factor = options.test == kSendLat ? 0.5 : 1.0;
  std::sort(samples.begin(), samples.end());
  printf("%-10s %zu B  median %.2f us  p99 %.2f us  (%ld iterations%s)\n", kTestNames[options.test],
         size, factor * Percentile(samples, 0.5), factor * Percentile(samples, 0.99),
         options.iterations,
         options.test == kSendLat ? ", half round trip"
         : options.test == kFlushLat
             ? (c.flush_type == RPMA_FLUSH_TYPE_PERSISTENT ? ", write + persistent flush"
                                                           : ", write + visibility flush")
             : "");
}

// Streams `count` operations: at most `depth` outstanding, every 16th signalled (the last
// too). Returns the seconds from the first post until the last completion is polled.
double Stream(Client& c, const Options& options, long count) {
  const size_t size = options.size;
  auto start = Clock::now();
  long posted = 0, retired = 0;  // retired: operations known complete (by signalled ones)
  ibv_wc wcs[16];
  while (retired < count) {
    while (posted < count && posted - retired < options.depth) {
      bool signaled = (posted + 1) % kSignalEvery == 0 || posted + 1 == count;
      int flags = signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
      switch (options.test) {
        case kWriteBw:
          Check(rpma_write(c.conn, c.remote, 0, c.mr, 0, size, flags, nullptr), "rpma_write");
          break;
        case kReadBw:
          Check(rpma_read(c.conn, c.mr, 0, c.remote, 0, size, flags, nullptr), "rpma_read");
          break;
        case kSendBw:
          Check(rpma_send(c.conn, c.mr, 0, size, flags, nullptr), "rpma_send");
          break;
        default:
          break;
      }
      ++posted;
    }
    int got = 0;
    int ret = rpma_cq_get_wc(c.cq, 16, wcs, &got);
    if (ret == RPMA_E_NO_COMPLETION) continue;
    Check(ret, "rpma_cq_get_wc");
    for (int i = 0; i < got; ++i) {
      CheckWc(wcs[i], "client");
      // A signalled completion retires itself and every unsignalled one before it.
      retired = std::min(count, (retired / kSignalEvery + 1) * kSignalEvery);
    }
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void RunBandwidth(Client& c, const Options& options) {
  if (options.warmup > 0) Stream(c, options, options.warmup);
  double seconds = Stream(c, options, options.iterations);
  double bytes = static_cast<double>(options.size) * options.iterations;
  printf("%-10s %zu B  %.1f MiB/s  %.0f ops/s  (%ld iterations, depth %d)\n",
         kTestNames[options.test], options.size, bytes / seconds / (1 << 20),
         options.iterations / seconds, options.iterations, options.depth);
}

void RunClient(const Options& options) {
  ibv_context* ctx;
  Check(rpma_utils_get_ibv_context(options.addr.c_str(), RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx),
        "rpma_utils_get_ibv_context");
  rpma_peer* peer;
  Check(rpma_peer_new(ctx, &peer), "rpma_peer_new");
  Buffer buffer = AllocateBuffer(options.size, options.file_buffers);
  memset(buffer.data, 'c', options.size);
  Client c;
  Check(rpma_mr_reg(peer, buffer.data, options.size, kUsageAll, &c.mr), "rpma_mr_reg");

  rpma_conn_cfg* cfg = NewConnCfg(options.depth);
  Request request{kMagic,
                  static_cast<uint8_t>(options.test),
                  static_cast<uint8_t>(options.persistent),
                  static_cast<uint16_t>(options.depth),
                  options.size,
                  options.region};
  rpma_conn_private_data pdata{&request, sizeof(request)};
  rpma_conn_req* req;
  Check(rpma_conn_req_new(peer, options.addr.c_str(), options.port.c_str(), cfg, &req),
        "rpma_conn_req_new");
  Check(rpma_conn_req_connect(&req, &pdata, &c.conn), "rpma_conn_req_connect");
  ExpectEvent(c.conn, RPMA_CONN_ESTABLISHED, "client");
  Check(rpma_conn_get_cq(c.conn, &c.cq), "rpma_conn_get_cq");

  rpma_conn_private_data answer;
  Check(rpma_conn_get_private_data(c.conn, &answer), "rpma_conn_get_private_data");
  Reply reply;
  if (answer.len < sizeof(reply)) Die("client: the server sent no descriptors");
  memcpy(&reply, answer.ptr, sizeof(reply));
  Check(rpma_mr_remote_from_descriptor(reply.descriptors, reply.mr_desc_size, &c.remote),
        "rpma_mr_remote_from_descriptor");
  size_t remote_size;
  Check(rpma_mr_remote_get_size(c.remote, &remote_size), "rpma_mr_remote_get_size");
  if (remote_size < options.size) Die("client: the server's buffer is too small");
  rpma_peer_cfg* pcfg = nullptr;
  if (options.persistent) {
    Check(rpma_peer_cfg_from_descriptor(reply.descriptors + reply.mr_desc_size,
                                        reply.pcfg_desc_size, &pcfg),
          "rpma_peer_cfg_from_descriptor");
    Check(rpma_conn_apply_remote_peer_cfg(c.conn, pcfg), "rpma_conn_apply_remote_peer_cfg");
    c.flush_type = RPMA_FLUSH_TYPE_PERSISTENT;
  }

  if (IsLatency(options.test)) {
    RunLatency(c, options);
  } else {
    RunBandwidth(c, options);
  }
  fflush(stdout);

  Check(rpma_conn_disconnect(c.conn), "rpma_conn_disconnect");
  ExpectEvent(c.conn, RPMA_CONN_CLOSED, "client");
  Check(rpma_conn_delete(&c.conn), "rpma_conn_delete");
  Check(rpma_mr_remote_delete(&c.remote), "rpma_mr_remote_delete");
  if (pcfg != nullptr) Check(rpma_peer_cfg_delete(&pcfg), "rpma_peer_cfg_delete");
  Check(rpma_mr_dereg(&c.mr), "rpma_mr_dereg");
  Check(rpma_conn_cfg_delete(&cfg), "rpma_conn_cfg_delete");
  Check(rpma_peer_delete(&peer), "rpma_peer_delete");
  FreeBuffer(buffer);
}

}  // namespace
}  // namespace rpma_sim_perf

int main(int argc, char** argv) {
  using namespace rpma_sim_perf;
  Options options = ParseOptions(argc, argv);
  if (options.mode == "server") {
    RunServer(options, nullptr);
  } else if (options.mode == "client") {
    RunClient(options);
  } else {
    Listening listening;
    std::thread server([&] { RunServer(options, &listening); });
    {
      std::unique_lock<std::mutex> lock(listening.mutex);
      listening.cv.wait(lock, [&] { return listening.ready; });
    }
    RunClient(options);
    server.join();
  }
  return 0;
}
