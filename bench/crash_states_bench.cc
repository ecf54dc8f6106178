// crash_states_bench.cc -- how fast crash states are judged: a 100-write workload (each
// 64-byte write followed by its persistent flush, 200 crash points) swept by the testing
// kit's SweepCrashStates with an in-process recovery check (run in the kit's recovery
// child), in loss mode all and torn by words; prints a table of states per second.
// bench/crash_states.sh measures rpma-sim-crash with a command as the check.
//
//   bazel run -c opt //bench:crash_states_bench [-- --writes N]
#include <rpma_sim/testing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>

namespace {

int g_writes = 100;

double NowSeconds() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

// Each write: 64 bytes at the next line, then its persistent flush.
void Workload(rpma_sim::testing::ConnectedPair& pair) {
  rpma_sim::testing::Side& client = pair.client();
  for (int i = 0; i < g_writes; ++i) {
    const size_t offset = static_cast<size_t>(i) * 64 % client.size;
    memset(client.memory + offset, i + 1, 64);
    ASSERT_EQ(0, rpma_write(client.conn, client.remote, offset, client.mr, offset, 64,
                            RPMA_F_COMPLETION_ON_ERROR, nullptr));
    ASSERT_EQ(0, rpma_flush(client.conn, client.remote, offset, 64, RPMA_FLUSH_TYPE_PERSISTENT,
                            RPMA_F_COMPLETION_ALWAYS, nullptr));
    ASSERT_COMPLETION(client.cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
  }
}

// A recovery that reads every byte: each 8-byte word holds one value throughout (a power
// failure keeps or reverts whole words, so every state recovers and all of them are judged).
void Recover(uint8_t* memory, size_t size) {
  for (size_t word = 0; word < size; word += 8)
    for (size_t i = 1; i < 8; ++i)
      if (memory[word + i] != memory[word]) {
        ADD_FAILURE() << "word " << word / 8 << " torn";
        return;
      }
}

TEST(CrashStatesBench, StatesPerSecond) {
  printf("| workload | mode | crash points | states judged | duplicates | seconds | states/s |\n");
  printf("|---|---|---|---|---|---|---|\n");
  for (bool torn : {false, true}) {
    rpma_sim::testing::CrashSweepOptions options;
    options.pair.direct_write_to_pmem = true;
    options.pair.server_region_size = 8192;
    options.pair.client_region_size = 8192;
    options.words = torn;
    options.samples = torn ? 4 : 0;
    options.print = false;
    const double start = NowSeconds();
    rpma_sim::testing::CrashSweepSummary summary =
        rpma_sim::testing::SweepCrashStates(Workload, Recover, options);
    const double seconds = NowSeconds() - start;
    printf("| %d writes + flushes | %s | %llu | %llu | %llu | %.3f | %.0f |\n", g_writes,
           torn ? "words (each alone, 4 seeded)" : "all",
           static_cast<unsigned long long>(summary.points),
           static_cast<unsigned long long>(summary.states),
           static_cast<unsigned long long>(summary.duplicates), seconds, summary.states / seconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--writes") == 0) g_writes = atoi(argv[i + 1]);
  return RUN_ALL_TESTS();
}
