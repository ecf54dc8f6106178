// conn_event_assertions_test.cc -- EXPECT_CONN_EVENT passes on the event it names and fails,
// naming the event that came instead, on another, or on none; the pair's teardown then knows
// the connection ended. On every transport.
#include <gtest/gtest-spi.h>
#include <rpma_sim/testing.h>

namespace {

using rpma_sim::testing::PairTest;

class ConnEventAssertionsTest : public PairTest {};

TEST_P(ConnEventAssertionsTest, PassOnTheEventTheyName) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_EQ(0, rpma_conn_disconnect(client().conn));
  EXPECT_CONN_EVENT(client().conn, RPMA_CONN_CLOSED);
  EXPECT_CONN_EVENT(server().conn, RPMA_CONN_CLOSED);
  EXPECT_TRUE(rpma_sim::testing::ConnectionEnded(client().conn));
  EXPECT_TRUE(rpma_sim::testing::ConnectionEnded(server().conn));
}

TEST_P(ConnEventAssertionsTest, AnotherEventFailsAndIsNamed) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_EQ(0, rpma_conn_disconnect(client().conn));
  static rpma_conn* conn;
  conn = server().conn;
  EXPECT_FATAL_FAILURE(ASSERT_CONN_EVENT(conn, RPMA_CONN_LOST),
                       "came instead: RPMA_CONN_CLOSED (Connection closed)");
  EXPECT_CONN_EVENT(client().conn, RPMA_CONN_CLOSED);
}

// It waits for its timeout (0.2 s): that is what it tests.
TEST_P(ConnEventAssertionsTest, NoEventFailsAfterTheTimeout) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  static rpma_conn* conn;
  conn = client().conn;
  rpma_sim::testing::SetTimeoutMs(200);
  EXPECT_NONFATAL_FAILURE(EXPECT_CONN_EVENT(conn, RPMA_CONN_CLOSED), "no event came within 200 ms");
  rpma_sim::testing::SetTimeoutMs(10000);
  EXPECT_FALSE(rpma_sim::testing::ConnectionEnded(client().conn));
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(ConnEventAssertionsTest);

}  // namespace
