// fault_sweep_test.cc -- SweepFaultPoints: a body that handles every injected error passes
// each point, on every transport; one that crashes, hangs or fails an expectation at a point
// has that point reported so, and the sweep fails naming it.
#include <gtest/gtest-spi.h>
#include <rpma_sim/testing.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <vector>

namespace {

using rpma_sim::testing::PairTest;
using rpma_sim::testing::PointOutcome;
using rpma_sim::testing::PointResult;
using rpma_sim::testing::SweepFaultPoints;

class FaultSweepTest : public PairTest {};

// A write and its completion, taken the way librpma's examples take it (rpma_cq_wait, then
// rpma_cq_get_wc): whatever fails, the body stops there, as a careful program would.
TEST_P(FaultSweepTest, ABodyThatHandlesEveryErrorPassesEveryPoint) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  std::vector<PointResult> results = SweepFaultPoints([this] {
    if (rpma_write(client().conn, client().remote, 0, client().mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                   nullptr) != 0)
      return;
    if (rpma_cq_wait(client().cq) != 0) return;
    ibv_wc wc;
    if (rpma_cq_get_wc(client().cq, 1, &wc, nullptr) != 0) return;
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  });
  ASSERT_GE(results.size(), 3u);
  EXPECT_EQ("rpma_write", results[0].function);
  EXPECT_EQ("Invalid argument", results[0].error);
  EXPECT_EQ("", results.back().function) << "the last run must fail no point";
  for (const PointResult& result : results)
    EXPECT_EQ(PointOutcome::kPassed, result.outcome) << "point " << result.point;
}

// What a run may take before it counts as hung: the hang below costs this much. Not less: a
// child under a sanitizer takes a while to start.
constexpr int kSweepTimeoutMs = 3000;

// Point 1 crashes, point 2 hangs, point 3 fails an expectation, point 4 is handled.
void BadBody() {
  rpma_conn_cfg* cfg = nullptr;
  if (rpma_conn_cfg_new(&cfg) != 0) abort();
  if (rpma_conn_cfg_set_sq_size(cfg, 8) != 0)
    for (;;) pause();
  EXPECT_EQ(0, rpma_conn_cfg_set_rq_size(cfg, 8));
  (void)rpma_conn_cfg_delete(&cfg);
}

TEST(FaultSweepOutcomesTest, CrashesHangsAndFailedExpectationsAreReported) {
  static std::vector<PointResult> results;
  rpma_sim::testing::SweepOptions options;
  options.timeout_ms = kSweepTimeoutMs;
  EXPECT_NONFATAL_FAILURE(results = SweepFaultPoints(BadBody, options),
                          "point 2 (rpma_conn_cfg_set_sq_size, Invalid argument): HUNG");
  ASSERT_EQ(5u, results.size());
  EXPECT_EQ(PointOutcome::kCrashed, results[0].outcome);
  EXPECT_EQ("rpma_conn_cfg_new", results[0].function);
  EXPECT_EQ(PointOutcome::kHung, results[1].outcome);
  EXPECT_EQ(PointOutcome::kFailed, results[2].outcome);
  EXPECT_EQ("rpma_conn_cfg_set_rq_size", results[2].function);
  EXPECT_EQ(PointOutcome::kPassed, results[3].outcome);
  EXPECT_EQ("rpma_conn_cfg_delete", results[3].function);
  EXPECT_EQ(PointOutcome::kPassed, results[4].outcome);  // no point failed: the end
}

TEST(FaultSweepOutcomesTest, TheFailureListsEveryBadPoint) {
  rpma_sim::testing::SweepOptions options;
  options.timeout_ms = kSweepTimeoutMs;
  options.first_point = 3;  // skips the crash and the hang
  EXPECT_NONFATAL_FAILURE(SweepFaultPoints(BadBody, options),
                          "point 3 (rpma_conn_cfg_set_rq_size, Invalid argument): FAILED an "
                          "expectation");
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(FaultSweepTest);

}  // namespace
