// power_failure_test.cc -- PowerFail and EXPECT_BYTES_EQ: after a power failure of the server
// only what a persistent flush covered survives, on every transport, in the test's process
// and in a child's; a difference is reported with its offsets.
#include <gtest/gtest-spi.h>
#include <rpma_sim/testing.h>
#include <string.h>

#include <vector>

namespace {

using rpma_sim::testing::PairOptions;
using rpma_sim::testing::PairTest;
using rpma_sim::testing::PowerFail;
using rpma_sim::testing::Side;

constexpr size_t kLine = 64;

PairOptions Armed() {
  PairOptions options;
  options.arm_power_failure = true;
  options.direct_write_to_pmem = true;
  return options;
}

class PowerFailureTest : public PairTest {
 protected:
  // The client writes `byte` over [offset, offset + kLine) of the server's memory, and, if
  // `flush`, makes it durable with a persistent flush.
  void Write(size_t offset, uint8_t byte, bool flush) {
    memset(client().memory + offset, byte, kLine);
    ASSERT_EQ(0, rpma_write(client().conn, client().remote, offset, client().mr, offset, kLine,
                            RPMA_F_COMPLETION_ALWAYS, nullptr));
    ASSERT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
    if (!flush) return;
    ASSERT_EQ(0, rpma_flush(client().conn, client().remote, offset, kLine,
                            RPMA_FLUSH_TYPE_PERSISTENT, RPMA_F_COMPLETION_ALWAYS, nullptr));
    ASSERT_COMPLETION(client().cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
  }
};

// What survives: the flushed line; the line written and not flushed is zero again.
std::vector<uint8_t> Survivors() {
  std::vector<uint8_t> expected(2 * kLine, 0);
  memset(expected.data(), 0xAB, kLine);
  return expected;
}

TEST_P(PowerFailureTest, OnlyWhatWasFlushedSurvives) {
  ASSERT_NO_FATAL_FAILURE(Connect(Armed()));
  ASSERT_NO_FATAL_FAILURE(Write(0, 0xAB, true));
  ASSERT_NO_FATAL_FAILURE(Write(kLine, 0xCD, false));
  ASSERT_NO_FATAL_FAILURE(PowerFail(server().peer, RPMA_SIM_LOSS_ALL));
  EXPECT_CONN_EVENT(client().conn, RPMA_CONN_LOST);
  EXPECT_CONN_EVENT(server().conn, RPMA_CONN_LOST);
  EXPECT_BYTES_EQ(server().memory, Survivors().data(), 2 * kLine);
}

TEST_P(PowerFailureTest, ADifferenceNamesItsFirstOffsets) {
  ASSERT_NO_FATAL_FAILURE(Connect(Armed()));
  ASSERT_NO_FATAL_FAILURE(Write(0, 0xAB, false));  // not flushed: lost
  ASSERT_NO_FATAL_FAILURE(PowerFail(server().peer, RPMA_SIM_LOSS_ALL));
  static const uint8_t* memory;
  memory = server().memory;
  EXPECT_NONFATAL_FAILURE(EXPECT_BYTES_EQ(memory, Survivors().data(), 2 * kLine),
                          "differ in 64 of 2 * kLine = 128 bytes; the first:\n"
                          "  offset 0: 0x00, expected 0xab");
}

TEST(PowerFailWithoutArmingTest, FailsNamingTheSeed) {
  rpma_peer* peer = nullptr;
  ibv_context* device = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &device));
  ASSERT_EQ(0, rpma_peer_new(device, &peer));
  static rpma_peer* unarmed;
  unarmed = peer;
  EXPECT_FATAL_FAILURE(PowerFail(unarmed, RPMA_SIM_LOSS_ALL), "RPMA_SIM_SEED=");
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// The server in a child loses power after the client has gone, and checks its memory there.
class PowerFailureInChildTest : public PowerFailureTest {};

TEST_P(PowerFailureInChildTest, OnlyWhatWasFlushedSurvives) {
  PairOptions options = Armed();
  options.server_in_child = true;
  options.server_main = [](Side& server) {
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
    ASSERT_NO_FATAL_FAILURE(PowerFail(server.peer, RPMA_SIM_LOSS_ALL));
    EXPECT_BYTES_EQ(server.memory, Survivors().data(), 2 * kLine);
  };
  ASSERT_NO_FATAL_FAILURE(Connect(options));
  ASSERT_NO_FATAL_FAILURE(Write(0, 0xAB, true));
  ASSERT_NO_FATAL_FAILURE(Write(kLine, 0xCD, false));
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(PowerFailureTest);
INSTANTIATE_RPMA_SIM_PROCESS_TRANSPORTS(PowerFailureInChildTest);

}  // namespace
