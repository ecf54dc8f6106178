// crash_sweep.cc -- every crash state of the server's memory after a workload, judged by the
// test's recovery code (SweepCrashStates): the pair, the recording, the exploration through
// the C API (rpma_sim_crash_*), and the table.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "rpma_sim/testing.h"
#include "testing/recovery_child.h"

namespace rpma_sim {
namespace testing {
namespace {

const char* LossName(rpma_sim_loss loss) {
  switch (loss) {
    case RPMA_SIM_LOSS_WORDS:
      return "words";
    case RPMA_SIM_LOSS_LINES:
      return "lines";
    case RPMA_SIM_LOSS_NONE:
      return "none";
    case RPMA_SIM_LOSS_ALL:
      break;
  }
  return "all";
}

// What the exploration's callback needs.
struct Sweep {
  const CrashSweepOptions* options;
  const void* server_memory;   // where the server's region was (its key in the journal)
  std::vector<uint8_t> final;  // its contents at the end (for a region nothing placed in)
  RecoveryChild* child;
  CrashSweepSummary* summary;
};

void PrintRow(const CrashStateResult& row) {
  printf("%6llu  %-5s  %-60.60s  %-40.40s  %s\n", static_cast<unsigned long long>(row.point),
         LossName(row.loss), row.event.c_str(), row.reverted.c_str(),
         row.recovered ? "recovered" : ("FAILED: " + row.failure).c_str());
}

int JudgeState(const rpma_sim_crash_state* state, void* arg) {
  Sweep& sweep = *static_cast<Sweep*>(arg);
  const uint8_t* image = sweep.final.data();
  for (size_t i = 0; i < state->regions; ++i) {
    if (state->region[i].address == reinterpret_cast<uint64_t>(sweep.server_memory) &&
        state->region[i].length == sweep.final.size())
      image = state->region[i].image;
  }
  CrashStateResult row;
  row.point = state->point;
  row.event = state->event;
  row.loss = state->loss;
  row.reverted = state->reverted;
  row.rule = state->rule;
  row.seed = state->seed;
  row.recovered = sweep.child->Judge(image, &row.failure);
  if (!row.recovered) ++sweep.summary->failed;
  if (sweep.options->print || !row.recovered) PrintRow(row);
  sweep.summary->results.push_back(std::move(row));
  return 0;
}

void KeepFinding(const char* line, void* arg) {
  static_cast<std::vector<std::string>*>(arg)->push_back(line);
}

// A file for the journal, in the test's own temporary directory.
std::string NewJournalPath() {
  const char* dir = getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/rpma-sim-crash.XXXXXX";
  int fd = mkstemp(&path[0]);
  if (fd >= 0) close(fd);
  return fd >= 0 ? path : "";
}

}  // namespace

CrashSweepSummary SweepCrashStates(const std::function<void(ConnectedPair& pair)>& workload,
                                   const std::function<void(uint8_t* memory, size_t size)>& recover,
                                   const CrashSweepOptions& options) {
  CrashSweepSummary summary;
  if (options.pair.server_in_child || options.pair.server_in_thread) {
    ADD_FAILURE() << "SweepCrashStates records the server in the test's process: no "
                     "server_in_child or server_in_thread";
    return summary;
  }
  const std::string journal = NewJournalPath();
  if (journal.empty()) {
    ADD_FAILURE() << "cannot make a file for the crash journal";
    return summary;
  }
  // Removed however the sweep ends.
  std::unique_ptr<const std::string, void (*)(const std::string*)> remove_journal(
      &journal, [](const std::string* path) { unlink(path->c_str()); });
  Sweep sweep{&options, nullptr, {}, nullptr, &summary};
  {
    ConnectedPair pair;
    pair.Connect(options.pair);
    if (::testing::Test::HasFatalFailure()) return summary;
    Side& server = pair.server();
    EXPECT_EQ(0, rpma_sim_crash_record(server.peer));
    workload(pair);
    EXPECT_EQ(0, rpma_sim_crash_record_stop(server.peer, journal.c_str()));
    sweep.server_memory = server.memory;
    sweep.final.assign(server.memory, server.memory + server.size);
    pair.Teardown();
  }
  if (::testing::Test::HasFatalFailure()) return summary;
  int findings = rpma_sim_crash_lint(journal.c_str(), KeepFinding, &summary.lint);
  EXPECT_LE(0, findings) << "rpma_sim_crash_lint";
  for (const std::string& line : summary.lint) printf("lint: %s\n", line.c_str());

  RecoveryChild child(recover, sweep.final.size(), options.timeout_ms);
  sweep.child = &child;
  rpma_sim_crash_options explore{options.words ? 1 : 0, options.lines ? 1 : 0, options.samples,
                                 options.seed, options.max_states};
  if (options.print)
    printf("%6s  %-5s  %-60s  %-40s  %s\n", "point", "loss", "operation at the point",
           "what reverted", "result");
  rpma_sim_crash_summary explored{};
  EXPECT_EQ(0, rpma_sim_crash_explore(journal.c_str(), &explore, JudgeState, &sweep, &explored));
  summary.points = explored.points;
  summary.states = explored.states;
  summary.duplicates = explored.duplicates;
  printf("%llu crash points, %llu states judged (%llu duplicates skipped), %llu failed\n",
         static_cast<unsigned long long>(summary.points),
         static_cast<unsigned long long>(summary.states),
         static_cast<unsigned long long>(summary.duplicates),
         static_cast<unsigned long long>(summary.failed));
  if (explored.truncated) {
    ADD_FAILURE() << "the recording was cut short at the crash journal's limit (256 MiB, the "
                     "server's region counted whole at its first write): what the workload did "
                     "after was not recorded, and its crash states were not judged";
  }
  if (summary.failed == 0) return summary;
  std::string failing;
  for (const CrashStateResult& row : summary.results) {
    if (row.recovered) continue;
    const std::string seeded =
        row.seed != 0 ? " with rpma_sim_fault_set_seed(" + std::to_string(row.seed) + ")" : "";
    failing += "\n  point " + std::to_string(row.point) + " (" + LossName(row.loss) + ", " +
               row.reverted + "): " + row.failure;
    if (row.rule.empty()) {
      // After the last point no rule stops the run: the power fails at its end.
      failing += "\n    replay: rpma_sim_power_failure(server peer, RPMA_SIM_LOSS_" +
                 std::string(row.loss == RPMA_SIM_LOSS_WORDS   ? "WORDS"
                             : row.loss == RPMA_SIM_LOSS_LINES ? "LINES"
                                                               : "ALL") +
                 ") after the workload" + seeded;
      continue;
    }
    failing += "\n    replay: ScopedFaults(\"" + row.rule + "\")" + seeded +
               " around the workload; RPMA_SIM_FAULTS='" + row.rule + "'" +
               (row.seed != 0 ? " RPMA_SIM_SEED=" + std::to_string(row.seed) : std::string()) +
               " for a whole program";
  }
  ADD_FAILURE() << summary.failed << " of " << summary.states
                << " crash states did not recover:" << failing;
  return summary;
}

}  // namespace testing
}  // namespace rpma_sim
