// scoped_faults_test.cc -- ScopedFaults: its rules fire inside the scope only, every failure
// inside names the seed, and a rule that is not understood fails. On every transport.
#include <gtest/gtest-spi.h>
#include <rpma_sim/testing.h>
#include <string.h>

namespace {

using rpma_sim::testing::PairTest;
using rpma_sim::testing::ScopedFaults;

class ScopedFaultsTest : public PairTest {
 protected:
  void Write(uintptr_t wr_id) {
    ASSERT_EQ(0, rpma_write(client().conn, client().remote, 0, client().mr, 0, 8,
                            RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void*>(wr_id)));
  }
};

TEST_P(ScopedFaultsTest, RulesFireInsideTheScopeOnly) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(1));  // before the scope: no rule
  EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  {
    ScopedFaults faults("delay:op=write,us=1000,nth=1");
    ASSERT_NO_FATAL_FAILURE(Write(2));
    EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
    EXPECT_EQ(1u, faults.fired());
  }
  uint64_t before = 0, after = 0;
  ASSERT_EQ(0, rpma_sim_fault_count(&before));
  { ScopedFaults faults("wc:op=write,status=IBV_WC_RETRY_EXC_ERR,nth=1"); }
  ASSERT_NO_FATAL_FAILURE(Write(3));  // the rule above was cleared with its scope
  EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  ASSERT_EQ(0, rpma_sim_fault_count(&after));
  EXPECT_EQ(before, after);
}

TEST_P(ScopedFaultsTest, AWorkRequestRuleFailsTheWrite) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ScopedFaults faults("wc:op=write,status=IBV_WC_RETRY_EXC_ERR,side=client,nth=1");
  ASSERT_NO_FATAL_FAILURE(Write(1));
  EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR);
  EXPECT_EQ(1u, faults.fired());
}

TEST(ScopedFaultsSeedTest, FailuresInsideTheScopeNameTheSeed) {
  ASSERT_EQ(0, rpma_sim_fault_set_seed(1234));
  EXPECT_NONFATAL_FAILURE(
      {
        ScopedFaults faults("delay:op=write,us=1");
        ADD_FAILURE() << "a failure while rules are in force";
      },
      "RPMA_SIM_SEED=1234 replays their choices");
}

TEST(ScopedFaultsSeedTest, ARuleNotUnderstoodFails) {
  EXPECT_NONFATAL_FAILURE({ ScopedFaults faults("nonsense:x=1"); },
                          "fault rules not understood: nonsense:x=1");
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(ScopedFaultsTest);

}  // namespace
