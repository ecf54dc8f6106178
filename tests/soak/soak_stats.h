// soak_stats.h -- what a soak counts (operations by kind and outcome, faults, power failures,
// reconnects, bytes verified) and the summary table it prints at the end.
#ifndef RPMA_SIM_TESTS_SOAK_SOAK_STATS_H_
#define RPMA_SIM_TESTS_SOAK_SOAK_STATS_H_

#include <cstdint>
#include <cstdio>

namespace soak {

// The kinds of operation the soak posts (a receive is posted by the server for each message).
enum Kind {
  kWrite,
  kRead,
  kAtomicWrite,
  kFlushPersistent,
  kFlushVisibility,
  kSend,
  kSendWithImm,
  kWriteWithImm,
  kRecv,
  kKindCount,
};

const char* KindName(Kind kind);

// How each operation of a kind ended.
struct KindCounts {
  uint64_t posted = 0;
  uint64_t ok = 0;          // completed successfully (signalled, or implied by a later one)
  uint64_t failed = 0;      // completed with the status a fault rule injected
  uint64_t flushed = 0;     // completed with IBV_WC_WR_FLUSH_ERR after a failure
  uint64_t queue_full = 0;  // a post into a full queue, refused with RPMA_E_PROVIDER as expected
};

struct Stats {
  KindCounts kinds[kKindCount];
  uint64_t rules_added = 0;         // fault rules put in force
  uint64_t rules_fired = 0;         // rpma_sim_fault_count at the end
  uint64_t failures_predicted = 0;  // wc and lose rules that fired at the predicted operation
  uint64_t power_failures[4] = {};  // by rpma_sim_loss
  uint64_t units_reverted = 0;      // bytes (ALL), words or lines reverted by power failures
  uint64_t reconnects = 0;
  uint64_t checkpoints = 0;        // quiescent points where every region was compared
  uint64_t persists = 0;           // rpma_sim_persist calls
  uint64_t bytes_verified = 0;     // bytes compared with the model (regions, reads, messages)
  uint64_t uncertain_windows = 0;  // failures after which the executed prefix was looked up
};

// Adds b into a.
void Accumulate(Stats* a, const Stats& b);

// The summary table, one row per kind, then the totals.
void PrintSummary(const char* title, const Stats& stats, FILE* out);

}  // namespace soak

#endif  // RPMA_SIM_TESTS_SOAK_SOAK_STATS_H_
