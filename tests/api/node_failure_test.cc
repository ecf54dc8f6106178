// node_failure_test.cc -- rpma_sim_node_fail: every rpma_peer is a node of the fabric; failing
// one loses each of its connections on both sides (RPMA_CONN_LOST, work requests flushed in
// order after those that completed), leaves other nodes' connections alone, and leaves the
// peer usable. Like every API test, it runs in process and again over tcp and over shm.
#include <librpma.h>
#include <rpma_sim.h>

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

class NodeFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&server_peer_));
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&client_peer_));
    port_ = FreeTcpPort();
    ASSERT_EQ(0, rpma_ep_listen(server_peer_, kLoopback, port_.c_str(), &ep_));
  }

  void TearDown() override {
    for (Link& link : links_) {
      if (link.client != nullptr) {
        EXPECT_EQ(0, rpma_conn_delete(&link.client));
      }
      if (link.server != nullptr) {
        EXPECT_EQ(0, rpma_conn_delete(&link.server));
      }
    }
    regs_.Release();
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    for (rpma_peer* peer : {client_peer_, other_peer_, server_peer_}) {
      if (peer != nullptr) {
        EXPECT_EQ(0, rpma_peer_delete(&peer));
      }
    }
  }

  struct Link {
    rpma_conn* client = nullptr;
    rpma_conn* server = nullptr;
  };

  // A connection from `client_peer` to the server's endpoint.
  void Connect(rpma_peer* client_peer, Link* link) {
    ASSERT_NO_FATAL_FAILURE(
        ConnectOnce(client_peer, ep_, port_, PairOptions(), &link->client, &link->server));
  }

  // Writes 8 bytes of `src` to the start of `dst` over `link`, signalled (wr_id `id`).
  void Write(const Link& link, Buffer* src, rpma_mr_remote* dst, uintptr_t id) {
    ASSERT_EQ(0, rpma_write(link.client, dst, 0, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(id)));
  }

  // Writes 8 bytes of `fill` from a buffer of `client_peer` to a fresh buffer of the server
  // over `link` and checks that they completed and arrived.
  void WriteWorks(const Link& link, rpma_peer* client_peer, uint8_t fill, uintptr_t id) {
    Buffer* src = regs_.NewBuffer(client_peer, 8, RPMA_MR_USAGE_WRITE_SRC, fill);
    Buffer* dst = regs_.NewBuffer(server_peer_, 8, RPMA_MR_USAGE_WRITE_DST, 0);
    rpma_mr_remote* remote = regs_.RemoteOf(dst);
    ASSERT_NE(nullptr, remote);
    ASSERT_NO_FATAL_FAILURE(Write(link, src, remote, id));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(link.client), id, IBV_WC_RDMA_WRITE));
    EXPECT_EQ(fill, dst->bytes[0]);
  }

  rpma_peer* server_peer_ = nullptr;
  rpma_peer* client_peer_ = nullptr;
  rpma_peer* other_peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  Link links_[2];
  Registrations regs_;
};

TEST(NodeFailureArgsTest, NullPeerIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_sim_node_fail(nullptr)); }

TEST(NodeFailureArgsTest, PeerWithoutConnectionsFailsQuietlyAndStaysUsable) {
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  EXPECT_EQ(0, rpma_sim_node_fail(peer));
  uint8_t byte = 0;
  rpma_mr_local* mr = nullptr;
  EXPECT_EQ(0, rpma_mr_reg(peer, &byte, 1, RPMA_MR_USAGE_READ_SRC, &mr));
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// The server's node fails under an established connection: both sides lose it, and the
// receives each side had posted come back flushed.
TEST_F(NodeFailureTest, ServerNodeFailureLosesTheConnectionOnBothSides) {
  Link& link = links_[0];
  ASSERT_NO_FATAL_FAILURE(Connect(client_peer_, &link));
  Buffer* client_recv = regs_.NewBuffer(client_peer_, 8, RPMA_MR_USAGE_RECV, 0);
  Buffer* server_recv = regs_.NewBuffer(server_peer_, 8, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(link.client, client_recv->mr, 0, 8, Ctx(0x11)));
  ASSERT_EQ(0, rpma_recv(link.server, server_recv->mr, 0, 8, Ctx(0x22)));

  ASSERT_EQ(0, rpma_sim_node_fail(server_peer_));

  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(link.server, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(link.client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(MainCq(link.server), 0x22, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(MainCq(link.client), 0x11, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ExpectNoPendingEvent(link.client);
  ExpectNoPendingEvent(link.server);
}

// The client's node fails: the writes that completed stay completed; what is posted after the
// loss completes, in posting order, with IBV_WC_WR_FLUSH_ERR.
TEST_F(NodeFailureTest, WorkRequestsAfterTheLossAreFlushedInOrder) {
  Link& link = links_[0];
  ASSERT_NO_FATAL_FAILURE(Connect(client_peer_, &link));
  Buffer* src = regs_.NewBuffer(client_peer_, 8, RPMA_MR_USAGE_WRITE_SRC, 0x5A);
  Buffer* dst = regs_.NewBuffer(server_peer_, 8, RPMA_MR_USAGE_WRITE_DST, 0);
  rpma_mr_remote* remote = regs_.RemoteOf(dst);
  ASSERT_NE(nullptr, remote);
  ASSERT_NO_FATAL_FAILURE(Write(link, src, remote, 1));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(link.client), 1, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0x5A, dst->bytes[0]);

  ASSERT_EQ(0, rpma_sim_node_fail(client_peer_));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(link.client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(link.server, RPMA_CONN_LOST));

  for (uintptr_t id = 2; id <= 4; ++id) ASSERT_NO_FATAL_FAILURE(Write(link, src, remote, id));
  for (uintptr_t id = 2; id <= 4; ++id) {
    ASSERT_NO_FATAL_FAILURE(
        ExpectCompletion(MainCq(link.client), id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  }
  ExpectNoCompletion(MainCq(link.client));
}

// Only the failed node's connections end: a second client's connection to the same server
// keeps working.
TEST_F(NodeFailureTest, OtherNodesConnectionsGoOn) {
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&other_peer_));
  ASSERT_NO_FATAL_FAILURE(Connect(client_peer_, &links_[0]));
  ASSERT_NO_FATAL_FAILURE(Connect(other_peer_, &links_[1]));

  ASSERT_EQ(0, rpma_sim_node_fail(client_peer_));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(links_[0].client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(links_[0].server, RPMA_CONN_LOST));

  ASSERT_NO_FATAL_FAILURE(WriteWorks(links_[1], other_peer_, 0x77, 7));
  ExpectNoPendingEvent(links_[1].client);
  ExpectNoPendingEvent(links_[1].server);
}

// The peer of a failed node is still usable: a new connection from it works.
TEST_F(NodeFailureTest, TheFailedNodeConnectsAgain) {
  ASSERT_NO_FATAL_FAILURE(Connect(client_peer_, &links_[0]));
  ASSERT_EQ(0, rpma_sim_node_fail(client_peer_));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(links_[0].client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(links_[0].server, RPMA_CONN_LOST));

  ASSERT_NO_FATAL_FAILURE(Connect(client_peer_, &links_[1]));
  ASSERT_NO_FATAL_FAILURE(WriteWorks(links_[1], client_peer_, 0x33, 9));
}

// A lost connection disconnects and is deleted like any other: rpma_conn_disconnect after
// the loss returns 0 and no further event comes.
TEST_F(NodeFailureTest, DisconnectAfterTheLossReturnsZero) {
  Link& link = links_[0];
  ASSERT_NO_FATAL_FAILURE(Connect(client_peer_, &link));
  ASSERT_EQ(0, rpma_sim_node_fail(server_peer_));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(link.client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(link.server, RPMA_CONN_LOST));
  EXPECT_EQ(0, rpma_conn_disconnect(link.client));
  EXPECT_EQ(0, rpma_conn_disconnect(link.server));
  ExpectNoPendingEvent(link.client);
  ExpectNoPendingEvent(link.server);
}

}  // namespace
