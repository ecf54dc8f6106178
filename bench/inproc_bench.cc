// inproc_bench.cc -- latency and bandwidth of every data-path operation on the in-process
// fabric, with memcpy measured in the same run, printed as one Markdown table.
//
// Latency: one signalled operation at a time, from the post until its completion is polled
// (busy polling, as a latency-minded librpma user does); median and 99th percentile.
// Bandwidth: a stream of unsignalled operations with every 16th signalled (the queue depth
// is 64), for a fixed number of bytes; bytes per second over the whole stream.
// With BENCH_ARMED=1 the server's node is armed for a power failure first
// (rpma_sim_power_failure_arm: every write keeps what it overwrites); bench/persistence_cost.sh
// compares that, the default (the report's range bookkeeping) and RPMA_SIM_PERSISTENCE_REPORT=0.
#include <librpma.h>
#include <rpma_sim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_pair.h"

namespace {

using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> samples, double fraction) {
  std::sort(samples.begin(), samples.end());
  size_t index = static_cast<size_t>(fraction * (samples.size() - 1));
  return samples[index];
}

struct Row {
  std::string operation;
  size_t size;
  double median_us = 0, p99_us = 0;  // latency rows
  double gib_per_s = 0;              // bandwidth rows
  double memcpy_gib_per_s = 0;
};

// Times `op` (which must finish one operation) `iterations` times.
std::vector<double> TimeEach(int iterations, const std::function<void()>& op) {
  for (int i = 0; i < iterations / 10; ++i) op();  // warm up
  std::vector<double> samples;
  samples.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    auto start = Clock::now();
    op();
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return samples;
}

Row Latency(const std::string& name, size_t size, const std::function<void()>& op, int iterations) {
  std::vector<double> samples = TimeEach(iterations, op);
  Row row{name, size};
  row.median_us = Percentile(samples, 0.5);
  row.p99_us = Percentile(samples, 0.99);
  return row;
}

Row Bandwidth(BenchPair& pair, const std::string& name, size_t size, size_t total,
              const std::function<void(bool signaled)>& post) {
  const int kSignalEvery = 16;
  auto run = [&](size_t bytes) {
    int outstanding_signaled = 0;
    size_t count = bytes / size;
    for (size_t i = 0; i < count; ++i) {
      bool signaled = (i % kSignalEvery) == kSignalEvery - 1 || i == count - 1;
      post(signaled);
      if (signaled && ++outstanding_signaled == 2) {
        pair.WaitSendCompletion();
        outstanding_signaled--;
      }
    }
    while (outstanding_signaled-- > 0) pair.WaitSendCompletion();
  };
  auto seconds_for = [&](const std::function<void()>& stream) {
    auto start = Clock::now();
    stream();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  run(std::min(total / 10, size * 64));  // warm up
  // Alternate the two measurements so that both see the same machine load.
  double op_seconds = 0, memcpy_seconds = 0;
  for (int round = 0; round < 4; ++round) {
    op_seconds += seconds_for([&] { run(total / 4); });
    memcpy_seconds += seconds_for([&] {
      for (size_t done = 0; done < total / 4; done += size) pair.CopyLocally(size);
    });
  }
  Row row{name, size};
  row.gib_per_s = total / op_seconds / (1 << 30);
  row.memcpy_gib_per_s = total / memcpy_seconds / (1 << 30);
  return row;
}

void Print(const std::vector<Row>& rows) {
  printf(
      "| operation | size | median latency (us) | p99 latency (us) | bandwidth (GiB/s) | "
      "memcpy (GiB/s) | bandwidth / memcpy |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    std::string size = row.size >= (1 << 20) ? std::to_string(row.size >> 20) + " MiB"
                       : row.size >= 1024    ? std::to_string(row.size >> 10) + " KiB"
                                             : std::to_string(row.size) + " B";
    if (row.gib_per_s == 0) {
      printf("| %s | %s | %.3f | %.3f | | | |\n", row.operation.c_str(), size.c_str(),
             row.median_us, row.p99_us);
    } else {
      printf("| %s | %s | | | %.2f | %.2f | %.2f |\n", row.operation.c_str(), size.c_str(),
             row.gib_per_s, row.memcpy_gib_per_s, row.gib_per_s / row.memcpy_gib_per_s);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 100000;
  size_t total = (argc > 2 ? atoll(argv[2]) : 4096LL) << 20;  // MiB per bandwidth row
  BenchPair pair(1 << 20);
  const char* armed = getenv("BENCH_ARMED");
  if (armed != nullptr && strcmp(armed, "1") == 0 && rpma_sim_power_failure_arm(pair.peer()) != 0) {
    fprintf(stderr, "rpma_sim_power_failure_arm failed\n");
    return 1;
  }
  std::vector<Row> rows;

  rows.push_back(Latency(
      "write", 64,
      [&] {
        pair.Write(64, true);
        pair.WaitSendCompletion();
      },
      iterations));
  rows.push_back(Latency(
      "read", 64,
      [&] {
        pair.Read(64, true);
        pair.WaitSendCompletion();
      },
      iterations));
  rows.push_back(Latency(
      "send/recv", 64, [&] { pair.SendAndReceive(64); }, iterations));
  rows.push_back(Latency(
      "flush", 64,
      [&] {
        pair.Flush(64, true);
        pair.WaitSendCompletion();
      },
      iterations));
  for (size_t size : {size_t(4096), size_t(1) << 20}) {
    rows.push_back(Bandwidth(pair, "write", size, total, [&](bool s) { pair.Write(size, s); }));
    rows.push_back(Bandwidth(pair, "read", size, total, [&](bool s) { pair.Read(size, s); }));
    rows.push_back(
        Bandwidth(pair, "send/recv", size, total, [&](bool s) { pair.SendWithReceive(size, s); }));
    rows.push_back(Bandwidth(pair, "write+flush", size, total, [&](bool s) {
      pair.Write(size, false);
      pair.Flush(size, s);
    }));
  }
  Print(rows);
  return 0;
}
