// connected_pair_test.cc -- what PairOptions sets up is there, on every transport: queue
// depths, private data, region sizes and usages, direct write to pmem; the server's code on
// a thread of the test, answering the client while the test body runs; and the server in a
// child process, whose failures fail the test (shm and tcp).
#include <gtest/gtest-spi.h>
#include <rpma_sim/testing.h>
#include <string.h>

#include <string>

namespace {

using rpma_sim::testing::PairOptions;
using rpma_sim::testing::PairTest;
using rpma_sim::testing::Side;

class ConnectedPairTest : public PairTest {};

std::string PrivateDataOf(rpma_conn* conn) {
  rpma_conn_private_data pdata = {};
  EXPECT_EQ(0, rpma_conn_get_private_data(conn, &pdata));
  return std::string(static_cast<const char*>(pdata.ptr), pdata.len);
}

size_t RemoteSize(rpma_mr_remote* remote) {
  size_t size = 0;
  EXPECT_EQ(0, rpma_mr_remote_get_size(remote, &size));
  return size;
}

TEST_P(ConnectedPairTest, TheDefaultsAreLibrpmasAndEveryUsage) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  EXPECT_EQ(4096u, RemoteSize(client().remote));
  EXPECT_EQ(4096u, RemoteSize(server().remote));
  EXPECT_EQ(nullptr, client().rcq);
  int usage = 0;
  ASSERT_EQ(0, rpma_mr_remote_get_flush_type(client().remote, &usage));
  EXPECT_EQ(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, usage);
  // Without direct write to pmem librpma refuses a persistent flush.
  EXPECT_EQ(RPMA_E_NOSUPP,
            rpma_flush(client().conn, client().remote, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                       RPMA_F_COMPLETION_ALWAYS, nullptr));
}

TEST_P(ConnectedPairTest, OptionsAreApplied) {
  PairOptions options;
  options.sq_size = 1;
  options.rcq_size = 4;
  options.client_private_data = "from the client";
  options.server_private_data = "from the server";
  options.client_region_size = 100;
  options.server_region_size = 8192;
  options.server_usage = RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
  options.direct_write_to_pmem = true;
  ASSERT_NO_FATAL_FAILURE(Connect(options));
  EXPECT_EQ("from the server", PrivateDataOf(client().conn));
  EXPECT_EQ("from the client", PrivateDataOf(server().conn));
  EXPECT_EQ(8192u, RemoteSize(client().remote));
  EXPECT_EQ(100u, RemoteSize(server().remote));
  EXPECT_NE(nullptr, client().rcq);
  EXPECT_NE(nullptr, server().rcq);
  // A send queue of 1: the persistent flush (allowed: direct write to pmem) fills it...
  ASSERT_EQ(0, rpma_flush(client().conn, client().remote, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  // ...so the next request does not fit until the completion is taken.
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_read(client().conn, client().mr, 0, client().remote, 0, 8,
                                       RPMA_F_COMPLETION_ALWAYS, nullptr));
  EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);  // the portable flush
  ASSERT_EQ(0, rpma_read(client().conn, client().mr, 0, client().remote, 0, 8,
                         RPMA_F_COMPLETION_ALWAYS, nullptr));
  EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
  // The server's region was registered for reads and persistent flushes, not for writes.
  ASSERT_EQ(0, rpma_write(client().conn, client().remote, 0, client().mr, 0, 8,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  EXPECT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR);
}

// The server on a thread: it receives the client's message and answers with it reversed.
PairOptions EchoServerOnAThread() {
  PairOptions options;
  options.rcq_size = 4;  // receives complete on a queue of their own
  options.server_in_thread = true;
  options.server_main = [](Side& server) {
    ASSERT_EQ(0, rpma_recv(server.conn, server.mr, 0, 64, nullptr));
    ASSERT_COMPLETION(server.rcq, IBV_WC_RECV, IBV_WC_SUCCESS);
    uint32_t len = rpma_sim::testing::LastCompletion().byte_len;
    std::string message(reinterpret_cast<const char*>(server.memory), len);
    std::string reply(message.rbegin(), message.rend());
    memcpy(server.memory + 64, reply.data(), reply.size());
    ASSERT_EQ(
        0, rpma_send(server.conn, server.mr, 64, reply.size(), RPMA_F_COMPLETION_ALWAYS, nullptr));
    ASSERT_COMPLETION(server.cq, IBV_WC_SEND, IBV_WC_SUCCESS);
  };
  return options;
}

// Private data longer than rpma_conn_private_data's u8 length can say (271 bytes): the pair
// fails to connect or sends it whole, never a cut 15-byte piece as if that were asked.
TEST_P(ConnectedPairTest, PrivateDataTooLongIsRefusedNotCut) {
  PairOptions options;
  options.client_private_data = std::string(256 + 15, 'c');
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    pair_.Connect(options);
  }
  for (int i = 0; i < results.size(); ++i)
    if (results.GetTestPartResult(i).failed()) return;  // refused: as it should
  EXPECT_EQ(options.client_private_data.size(), PrivateDataOf(server().conn).size())
      << "connected, with the private data cut to " << PrivateDataOf(server().conn).size()
      << " bytes";
}

TEST_P(ConnectedPairTest, TheServerAnswersFromItsThreadWhileTheTestRuns) {
  ASSERT_NO_FATAL_FAILURE(Connect(EchoServerOnAThread()));
  ASSERT_EQ(0, rpma_recv(client().conn, client().mr, 64, 64, nullptr));
  memcpy(client().memory, "ping", 4);
  ASSERT_EQ(0, rpma_send(client().conn, client().mr, 0, 4, RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_COMPLETION(client().cq, IBV_WC_SEND, IBV_WC_SUCCESS);
  ASSERT_COMPLETION(client().rcq, IBV_WC_RECV, IBV_WC_SUCCESS);
  EXPECT_BYTES_EQ(client().memory + 64, "gnip", 4);
}

TEST_P(ConnectedPairTest, AFailureOnTheServersThreadFailsTheTest) {
  EXPECT_NONFATAL_FAILURE_ON_ALL_THREADS(
      {
        PairOptions options;
        options.server_in_thread = true;
        options.server_main = [](Side&) { EXPECT_EQ(1, 2) << "failed on the server's thread"; };
        rpma_sim::testing::ConnectedPair pair;
        pair.Connect(options);
        pair.Teardown();
      },
      "failed on the server's thread");
}

// The server in a child process: once the client has gone, it expects `expected` in its
// memory.
PairOptions ServerInChildExpecting(const std::string& expected) {
  PairOptions options;
  options.server_in_child = true;
  options.server_main = [expected](Side& server) {
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
    EXPECT_BYTES_EQ(server.memory, expected.c_str(), expected.size() + 1);
  };
  return options;
}

class ServerInChildTest : public PairTest {};

TEST_P(ServerInChildTest, TheServerRunsInAChildAndChecksWhatTheClientWrote) {
  ASSERT_NO_FATAL_FAILURE(Connect(ServerInChildExpecting("written by the parent")));
  EXPECT_EQ(nullptr, server().conn);
  memcpy(client().memory, "written by the parent", 22);
  ASSERT_EQ(0, rpma_write(client().conn, client().remote, 0, client().mr, 0, 22,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
}

TEST_P(ServerInChildTest, AFailureOfTheServerFailsTheTest) {
  ASSERT_NO_FATAL_FAILURE(Connect(ServerInChildExpecting("never written")));
  static rpma_sim::testing::ConnectedPair* pair;
  pair = &pair_;
  EXPECT_NONFATAL_FAILURE(pair->Teardown(), "the server's process failed");
}

// Over inproc a connection reaches only listeners of its own process: Connect says so
// rather than failing with the child's rejection.
TEST(ServerInChildOverInprocTest, ConnectSaysTheTransportCannotReachAChild) {
  rpma_sim_transport previous = RPMA_SIM_TRANSPORT_AUTO;
  ASSERT_EQ(0, rpma_sim_get_transport(&previous));
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_INPROC));
  EXPECT_FATAL_FAILURE(
      {
        rpma_sim::testing::ConnectedPair pair;
        pair.Connect(ServerInChildExpecting("never written"));
      },
      "server_in_child needs the shm, tcp or auto transport");
  EXPECT_EQ(0, rpma_sim_set_transport(previous));
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(ConnectedPairTest);
INSTANTIATE_RPMA_SIM_PROCESS_TRANSPORTS(ServerInChildTest);

}  // namespace
