// perf_options.cc -- rpma-sim-perf's command line: usage text, parsing and defaults.
#include "bench/perf_options.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

namespace rpma_sim_perf {

const char* const kTestNames[kTestCount] = {"write_lat", "read_lat", "send_lat", "flush_lat",
                                            "write_bw",  "read_bw",  "send_bw"};

[[noreturn]] void Die(const char* format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "rpma-sim-perf: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
  exit(1);
}

namespace {

// ---------------------------------------------------------------------------------------------

void Usage(FILE* out) {
  fprintf(out,
          "usage: rpma-sim-perf TEST server|client|both ADDR PORT [options]\n"
          "\n"
          "TEST:\n"
          "  write_lat  rpma_write, post until its completion is polled\n"
          "  read_lat   rpma_read, likewise\n"
          "  send_lat   rpma_send/rpma_recv ping-pong; half the round trip\n"
          "  flush_lat  rpma_write (unsignalled) + rpma_flush, until the flush completes\n"
          "  write_bw   rpma_write stream\n"
          "  read_bw    rpma_read stream\n"
          "  send_bw    rpma_send stream (the server reposts receives)\n"
          "\n"
          "The server serves one client and exits when it disconnects; it follows the test\n"
          "and size the client asks for. `both` runs a server thread and the client in one\n"
          "process (set RPMA_SIM_TRANSPORT=tcp to go through TCP rather than in process).\n"
          "\n"
          "options:\n"
          "  -s SIZE   bytes per operation (K and M suffixes); default 64 (lat), 65536 (bw)\n"
          "  -n N      measured iterations; default 10000 (lat), 5000 (bw)\n"
          "  -w N      warm-up iterations first; default N/10, at most 1000\n"
          "  -t DEPTH  send queue size and bw window; default 128\n"
          "  -P        flush_lat: persistent flush (the server's peer cfg), not visibility\n"
          "  -e        server: sleep (send tests: in rpma_cq_wait; the default of the others)\n"
          "  -b        server: busy-poll its completion queue (the default of send tests)\n"
          "  -f        buffers are shared mappings of files in /dev/shm, as persistent memory\n"
          "            is a mapping of a file (a peer on this host maps them too)\n"
          "  -r BYTES  client: the server registers at least BYTES (default: the message\n"
          "            size), as a server with a log or a table does\n"
          "  -h        this help\n");
}

size_t ParseSize(const char* text) {
  char* end;
  unsigned long long value = strtoull(text, &end, 10);
  if (end == text) Die("bad size: %s", text);
  if (*end == 'k' || *end == 'K')
    value <<= 10, ++end;
  else if (*end == 'm' || *end == 'M')
    value <<= 20, ++end;
  if (*end != '\0' || value == 0) Die("bad size: %s", text);
  return static_cast<size_t>(value);
}

long ParseCount(const char* text, long min) {
  char* end;
  long value = strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < min) Die("bad number: %s", text);
  return value;
}

}  // namespace

Options ParseOptions(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      Usage(stdout);
      exit(0);
    }
  }
  if (argc < 5) {
    Usage(stderr);
    exit(2);
  }
  Options o;
  int test = 0;
  while (test < kTestCount && strcmp(argv[1], kTestNames[test]) != 0) ++test;
  if (test == kTestCount) Die("unknown test: %s (-h lists them)", argv[1]);
  o.test = static_cast<Test>(test);
  o.mode = argv[2];
  if (o.mode != "server" && o.mode != "client" && o.mode != "both") {
    Die("mode must be server, client or both: %s", argv[2]);
  }
  o.addr = argv[3];
  o.port = argv[4];
  for (int i = 5; i < argc; ++i) {
    std::string flag = argv[i];
    bool has_value = flag == "-s" || flag == "-n" || flag == "-w" || flag == "-t" || flag == "-r";
    if (has_value && i + 1 >= argc) Die("%s needs a value", flag.c_str());
    if (flag == "-s")
      o.size = ParseSize(argv[++i]);
    else if (flag == "-r")
      o.region = ParseSize(argv[++i]);
    else if (flag == "-n")
      o.iterations = ParseCount(argv[++i], 1);
    else if (flag == "-w")
      o.warmup = ParseCount(argv[++i], 0);
    else if (flag == "-t")
      o.depth = static_cast<int>(ParseCount(argv[++i], kSignalEvery));
    else if (flag == "-P")
      o.persistent = true;
    else if (flag == "-e")
      o.server_busy = false;
    else if (flag == "-b")
      o.server_busy = true;
    else if (flag == "-f")
      o.file_buffers = true;
    else
      Die("unknown option: %s (-h lists them)", flag.c_str());
  }
  if (o.depth > 4096) Die("-t: at most 4096");
  bool latency = IsLatency(o.test);
  if (o.size == 0) o.size = latency ? 64 : 65536;
  if (o.iterations == 0) o.iterations = latency ? 10000 : 5000;
  if (o.warmup < 0) o.warmup = std::min(1000L, o.iterations / 10);
  if (o.server_busy < 0) o.server_busy = IsSend(o.test) ? 1 : 0;
  return o;
}

}  // namespace rpma_sim_perf
