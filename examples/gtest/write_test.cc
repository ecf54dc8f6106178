// write_test.cc -- a user's GoogleTest of RDMA code with rpma-sim's kit: on inproc, shm and
// tcp, a write lands in the server's memory; under a fault rule it fails as a network would.
#include <rpma_sim/testing.h>
#include <string.h>

class WriteTest : public rpma_sim::testing::PairTest {};

TEST_P(WriteTest, LandsInTheServersMemory) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  const char message[] = "hello over RDMA";
  memcpy(client().memory, message, sizeof(message));
  ASSERT_EQ(0, rpma_write(client().conn, client().remote, 0, client().mr, 0, sizeof(message),
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  EXPECT_BYTES_EQ(server().memory, message, sizeof(message));
}

TEST_P(WriteTest, FailsWhenTheRetriesRunOut) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  rpma_sim::testing::ScopedFaults faults("wc:op=write,status=IBV_WC_RETRY_EXC_ERR,nth=1");
  ASSERT_EQ(0, rpma_write(client().conn, client().remote, 0, client().mr, 0, 8,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR);
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(WriteTest);
