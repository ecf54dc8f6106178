// perf_options.h -- what rpma-sim-perf is asked to do: its tests, its options, and the
// command-line parsing that fills them (with -h's usage text).
#ifndef RPMA_SIM_BENCH_PERF_OPTIONS_H_
#define RPMA_SIM_BENCH_PERF_OPTIONS_H_

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace rpma_sim_perf {

enum Test : uint8_t {
  kWriteLat,
  kReadLat,
  kSendLat,
  kFlushLat,
  kWriteBw,
  kReadBw,
  kSendBw,
  kTestCount
};

// The command-line names of the tests, indexed by Test.
extern const char* const kTestNames[kTestCount];

inline bool IsLatency(Test test) { return test <= kFlushLat; }
inline bool IsSend(Test test) { return test == kSendLat || test == kSendBw; }

constexpr int kSignalEvery = 16;  // every 16th operation of a stream is signalled

struct Options {
  Test test = kWriteLat;
  std::string mode, addr, port;
  size_t size = 0;      // 0: the test's default
  long iterations = 0;  // 0: the test's default
  long warmup = -1;     // -1: iterations / 10, at most 1000
  int depth = 128;
  bool persistent = false;
  // The server busy-polls its completion queue (1) or sleeps (0: send tests in rpma_cq_wait
  // between messages, the others in rpma_conn_next_event); -1: the test's default (send
  // tests busy-poll, the others sleep).
  int server_busy = -1;
  // Buffers are shared mappings of files in /dev/shm (as persistent memory is), not heap.
  bool file_buffers = false;
  // The server registers at least this many bytes (-r; 0: the message size), as a server
  // with a log or a table registers more than one message.
  size_t region = 0;
};

// Prints the message to stderr and exits with status 1.
[[noreturn]] void Die(const char* format, ...) __attribute__((format(printf, 1, 2)));

// Parses argv (prints the usage and exits on -h or a bad command line) and fills in defaults.
Options ParseOptions(int argc, char** argv);

}  // namespace rpma_sim_perf

#endif  // RPMA_SIM_BENCH_PERF_OPTIONS_H_
