// completion_assertions_test.cc -- EXPECT_COMPLETION and friends pass on the completion they
// name and fail, naming what came instead, on any other, or on none, on every transport.
#include <gtest/gtest-spi.h>
#include <rpma_sim/testing.h>
#include <string.h>

namespace {

using rpma_sim::testing::PairTest;

class CompletionAssertionsTest : public PairTest {
 protected:
  // The client writes 6 bytes into the server's memory at `offset`, signalled, wr_id 7.
  void Write(size_t offset) {
    memcpy(client().memory, "hello", 6);
    ASSERT_EQ(0, rpma_write(client().conn, client().remote, offset, client().mr, 0, 6,
                            RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void*>(7)));
  }
};

TEST_P(CompletionAssertionsTest, PassOnTheCompletionTheyName) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0));
  ASSERT_COMPLETION_ID(client().cq, 7, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  EXPECT_EQ(7u, rpma_sim::testing::LastCompletion().wr_id);
  EXPECT_BYTES_EQ(server().memory, "hello", 6);
}

TEST_P(CompletionAssertionsTest, AWrongOpcodeFailsAndNamesTheCompletionThatCame) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0));
  static rpma_cq* cq;
  cq = client().cq;
  EXPECT_NONFATAL_FAILURE(EXPECT_COMPLETION(cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS),
                          "came instead: IBV_WC_RDMA_WRITE IBV_WC_SUCCESS wr_id 0x7");
}

TEST_P(CompletionAssertionsTest, AWrongStatusFailsAndNamesTheStatusThatCame) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(server().size - 2));  // past the end of the server's region
  static rpma_cq* cq;
  cq = client().cq;
  EXPECT_FATAL_FAILURE(ASSERT_COMPLETION(cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS),
                       "came instead: IBV_WC_REM_ACCESS_ERR wr_id 0x7");
}

TEST_P(CompletionAssertionsTest, AWrongWorkRequestIdFails) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(Write(0));
  static rpma_cq* cq;
  cq = client().cq;
  EXPECT_NONFATAL_FAILURE(EXPECT_COMPLETION_ID(cq, 8, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS),
                          "expected a completion on cq: wr_id 0x8 IBV_WC_RDMA_WRITE");
}

// The one test that waits for its timeout: it is what it tests (0.2 s).
TEST_P(CompletionAssertionsTest, NoCompletionFailsAfterTheTimeout) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  static rpma_cq* cq;
  cq = server().cq;
  rpma_sim::testing::SetTimeoutMs(200);
  EXPECT_NONFATAL_FAILURE(EXPECT_COMPLETION(cq, IBV_WC_RECV, IBV_WC_SUCCESS),
                          "no completion came within 200 ms");
  rpma_sim::testing::SetTimeoutMs(10000);
}

TEST(CompletionNamesTest, UnknownValuesArePrintedAsNumbers) {
  EXPECT_EQ("IBV_WC_RECV_RDMA_WITH_IMM", rpma_sim::testing::OpcodeName(IBV_WC_RECV_RDMA_WITH_IMM));
  EXPECT_EQ("IBV_WC_FLUSH", rpma_sim::testing::OpcodeName(IBV_WC_FLUSH));
  EXPECT_EQ("opcode 77", rpma_sim::testing::OpcodeName(static_cast<ibv_wc_opcode>(77)));
  EXPECT_EQ("IBV_WC_WR_FLUSH_ERR", rpma_sim::testing::StatusName(IBV_WC_WR_FLUSH_ERR));
  EXPECT_EQ("status 99", rpma_sim::testing::StatusName(static_cast<ibv_wc_status>(99)));
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(CompletionAssertionsTest);

}  // namespace
