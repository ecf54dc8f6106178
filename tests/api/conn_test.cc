// conn_test.cc -- every rpma_conn_* function: error codes, events, teardown orders, private data.
#include <librpma.h>

#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

// A connection config with the given receive-CQ size and completion-channel sharing.
class ConnCfg {
 public:
  ConnCfg(uint32_t rcq_size, bool shared) {
    EXPECT_EQ(0, rpma_conn_cfg_new(&cfg_));
    EXPECT_EQ(0, rpma_conn_cfg_set_rcq_size(cfg_, rcq_size));
    EXPECT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg_, shared));
  }
  ~ConnCfg() { EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg_)); }
  ConnCfg(const ConnCfg&) = delete;
  ConnCfg& operator=(const ConnCfg&) = delete;

  const rpma_conn_cfg* get() const { return cfg_; }

 private:
  rpma_conn_cfg* cfg_ = nullptr;
};

// Tests that need one established pair with default configs.
class ConnTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(pair_.Connect()); }
  void TearDown() override {
    if (!HasFailure()) pair_.Teardown();  // otherwise ~ConnectedPair cleans up quietly
  }

  ConnectedPair pair_;
};

// Argument checks

TEST_F(ConnTest, GetEventFdInval) {
  int fd = -1;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_event_fd(nullptr, &fd));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_event_fd(pair_.client, nullptr));
}

TEST_F(ConnTest, GetEventFdIsARealFdPerConnection) {
  int client_fd = -1;
  int server_fd = -1;
  int ep_fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(pair_.client, &client_fd));
  ASSERT_EQ(0, rpma_conn_get_event_fd(pair_.server, &server_fd));
  ASSERT_EQ(0, rpma_ep_get_fd(pair_.ep, &ep_fd));
  EXPECT_NE(-1, fcntl(client_fd, F_GETFL));
  EXPECT_NE(-1, fcntl(server_fd, F_GETFL));
  EXPECT_NE(client_fd, server_fd);
  EXPECT_NE(ep_fd, server_fd);
  EXPECT_NE(ep_fd, client_fd);
}

TEST_F(ConnTest, NextEventInval) {
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_next_event(nullptr, &event));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_next_event(pair_.client, nullptr));
}

TEST_F(ConnTest, GetPrivateDataInval) {
  rpma_conn_private_data pdata = {nullptr, 0};
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_private_data(nullptr, &pdata));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_private_data(pair_.client, nullptr));
}

TEST_F(ConnTest, ApplyRemotePeerCfg) {
  rpma_peer_cfg* pcfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_new(&pcfg));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_apply_remote_peer_cfg(nullptr, pcfg));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_apply_remote_peer_cfg(pair_.client, nullptr));
  EXPECT_EQ(0, rpma_conn_apply_remote_peer_cfg(pair_.client, pcfg));
  ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
  EXPECT_EQ(0, rpma_conn_apply_remote_peer_cfg(pair_.client, pcfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&pcfg));
}

TEST_F(ConnTest, GetQpNumInval) {
  uint32_t qp_num = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_qp_num(nullptr, &qp_num));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_qp_num(pair_.client, nullptr));
}

TEST_F(ConnTest, QpNumsAreNonZeroAndDistinct) {
  uint32_t client_qp = 0;
  uint32_t server_qp = 0;
  ASSERT_EQ(0, rpma_conn_get_qp_num(pair_.client, &client_qp));
  ASSERT_EQ(0, rpma_conn_get_qp_num(pair_.server, &server_qp));
  EXPECT_NE(0u, client_qp);
  EXPECT_NE(0u, server_qp);
  EXPECT_NE(client_qp, server_qp);
}

TEST_F(ConnTest, GetCq) {
  rpma_cq* cq = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_cq(nullptr, &cq));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_cq(pair_.client, nullptr));
  ASSERT_EQ(0, rpma_conn_get_cq(pair_.client, &cq));
  EXPECT_NE(nullptr, cq);
  rpma_cq* server_cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(pair_.server, &server_cq));
  EXPECT_NE(nullptr, server_cq);
  EXPECT_NE(cq, server_cq);
}

TEST_F(ConnTest, GetRcqInvalAndNullWithoutRcq) {
  rpma_cq* rcq = reinterpret_cast<rpma_cq*>(0x1);
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_rcq(nullptr, &rcq));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_rcq(pair_.client, nullptr));
  ASSERT_EQ(0, rpma_conn_get_rcq(pair_.client, &rcq));
  EXPECT_EQ(nullptr, rcq);
  rcq = reinterpret_cast<rpma_cq*>(0x1);
  ASSERT_EQ(0, rpma_conn_get_rcq(pair_.server, &rcq));
  EXPECT_EQ(nullptr, rcq);
}

TEST_F(ConnTest, GetComplFdInvalAndNotShared) {
  int fd = -1;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_compl_fd(nullptr, &fd));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_compl_fd(pair_.client, nullptr));
  EXPECT_EQ(RPMA_E_NOT_SHARED_CHNL, rpma_conn_get_compl_fd(pair_.client, &fd));
  EXPECT_EQ(RPMA_E_NOT_SHARED_CHNL, rpma_conn_get_compl_fd(pair_.server, &fd));
}

TEST_F(ConnTest, WaitInvalAndNotShared) {
  rpma_cq* cq = nullptr;
  bool is_rcq = false;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_wait(nullptr, 0, &cq, &is_rcq));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_wait(pair_.client, 0, nullptr, &is_rcq));
  EXPECT_EQ(RPMA_E_NOT_SHARED_CHNL, rpma_conn_wait(pair_.client, 0, &cq, &is_rcq));
  EXPECT_EQ(RPMA_E_NOT_SHARED_CHNL, rpma_conn_wait(pair_.server, 0, &cq, nullptr));
}

TEST_F(ConnTest, DisconnectInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_conn_disconnect(nullptr)); }

TEST_F(ConnTest, DeleteInvalAndNull) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_delete(nullptr));
  rpma_conn* conn = nullptr;
  EXPECT_EQ(0, rpma_conn_delete(&conn));
  EXPECT_EQ(nullptr, conn);
}

// Receive CQ and shared completion channel

TEST(ConnCqTest, GetRcqWithRcqSize) {
  ConnCfg cfg(/*rcq_size=*/5, /*shared=*/false);
  PairOptions options;
  options.client_cfg = cfg.get();
  options.server_cfg = cfg.get();
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect(options));
  for (rpma_conn* conn : {pair.client, pair.server}) {
    rpma_cq* cq = nullptr;
    rpma_cq* rcq = nullptr;
    ASSERT_EQ(0, rpma_conn_get_cq(conn, &cq));
    ASSERT_EQ(0, rpma_conn_get_rcq(conn, &rcq));
    EXPECT_NE(nullptr, rcq);
    EXPECT_NE(cq, rcq);
  }
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnCqTest, RcqOnOneSideOnly) {
  ConnCfg cfg(/*rcq_size=*/5, /*shared=*/false);
  PairOptions options;
  options.server_cfg = cfg.get();
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect(options));
  rpma_cq* rcq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_rcq(pair.server, &rcq));
  EXPECT_NE(nullptr, rcq);
  rcq = reinterpret_cast<rpma_cq*>(0x1);
  ASSERT_EQ(0, rpma_conn_get_rcq(pair.client, &rcq));
  EXPECT_EQ(nullptr, rcq);
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnCqTest, SharedChannelGivesARealComplFd) {
  ConnCfg cfg(/*rcq_size=*/5, /*shared=*/true);
  PairOptions options;
  options.client_cfg = cfg.get();
  options.server_cfg = cfg.get();
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect(options));
  int client_fd = -1;
  int server_fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair.client, &client_fd));
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair.server, &server_fd));
  EXPECT_NE(-1, fcntl(client_fd, F_GETFL));
  EXPECT_NE(-1, fcntl(server_fd, F_GETFL));
  EXPECT_NE(client_fd, server_fd);
  int event_fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(pair.client, &event_fd));
  EXPECT_NE(event_fd, client_fd);
  // Nothing was posted: no completion event.
  EXPECT_FALSE(IsReadableNow(client_fd));
  EXPECT_FALSE(IsReadableNow(server_fd));

  // rpma_conn_get_compl_fd checks its arguments before the channel.
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_get_compl_fd(pair.client, nullptr));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnCqTest, WaitOnSharedChannelNonBlockingWithoutCompletion) {
  ConnCfg cfg(/*rcq_size=*/0, /*shared=*/true);
  PairOptions options;
  options.client_cfg = cfg.get();
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect(options));
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair.client, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  rpma_cq* cq = nullptr;
  bool is_rcq = true;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_conn_wait(pair.client, 0, &cq, &is_rcq));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_conn_wait(pair.client, 0, &cq, nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_wait(pair.client, 0, nullptr, nullptr));
  // The server has no shared channel.
  EXPECT_EQ(RPMA_E_NOT_SHARED_CHNL, rpma_conn_wait(pair.server, 0, &cq, &is_rcq));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// Events and teardown orders

TEST(ConnEventsTest, ClientDisconnectsFirst) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.server));
  ASSERT_EQ(0, rpma_conn_disconnect(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  // The server disconnects after CLOSED ("wait for CLOSED, then disconnect"): 0, no new event.
  EXPECT_EQ(0, rpma_conn_disconnect(pair.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, ServerDisconnectsFirst) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_EQ(0, rpma_conn_disconnect(pair.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, BothDisconnectBeforeEitherSeesClosed) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, DisconnectTwiceAfterClosedReturnsZero) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_EQ(0, rpma_conn_disconnect(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.server));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, DeletingTheClientWithoutDisconnectClosesTheServer) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(nullptr, pair.client);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, DeletingTheServerWithoutDisconnectClosesTheClient) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_EQ(0, rpma_conn_delete(&pair.server));
  EXPECT_EQ(nullptr, pair.server);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair.client));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, DisconnectThenDeleteAtOnceStillClosesThePeer) {
  // Examples 06, 08srq and 13 delete right after disconnecting, without waiting for CLOSED.
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_EQ(0, rpma_conn_disconnect(pair.client));
  ASSERT_EQ(0, rpma_conn_delete(&pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, NonBlockingNextEventWithoutEventReturnsNoEvent) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  for (rpma_conn* conn : {pair.client, pair.server}) {
    int fd = -1;
    ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
    ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    EXPECT_EQ(RPMA_E_NO_EVENT, rpma_conn_next_event(conn, &event));
    EXPECT_EQ(RPMA_E_NO_EVENT, rpma_conn_next_event(conn, &event));
  }
  // Non-blocking mode still delivers the events that are there.
  ASSERT_EQ(0, rpma_conn_disconnect(pair.server));
  for (rpma_conn* conn : {pair.client, pair.server}) {
    int fd = -1;
    ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
    ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    EXPECT_EQ(0, rpma_conn_next_event(conn, &event));
    EXPECT_EQ(RPMA_CONN_CLOSED, event);
    EXPECT_EQ(RPMA_E_NO_EVENT, rpma_conn_next_event(conn, &event));
  }
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnEventsTest, EventFdWorksWithEpoll) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(pair.client, &fd));
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(epfd, 0);
  epoll_event ev = {};
  ev.events = EPOLLIN;
  ev.data.u64 = 42;
  ASSERT_EQ(0, epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev));
  epoll_event got = {};
  EXPECT_EQ(0, epoll_wait(epfd, &got, 1, 0)) << "readable with no event pending";

  ASSERT_EQ(0, rpma_conn_disconnect(pair.server));
  ASSERT_EQ(1, epoll_wait(epfd, &got, 1, kSafetyTimeoutMs)) << "CLOSED never made the fd readable";
  EXPECT_EQ(42u, got.data.u64);
  EXPECT_TRUE(got.events & EPOLLIN);
  // Level-triggered: still readable until the event is taken.
  EXPECT_EQ(1, epoll_wait(epfd, &got, 1, 0));
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_EQ(0, rpma_conn_next_event(pair.client, &event));
  EXPECT_EQ(RPMA_CONN_CLOSED, event);
  EXPECT_EQ(0, epoll_wait(epfd, &got, 1, 0)) << "still readable after the only event was taken";
  close(epfd);

  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// Private data

TEST(ConnPrivateDataTest, BothDirectionsExactCopies) {
  std::vector<uint8_t> client_bytes(28);
  std::vector<uint8_t> server_bytes(14);
  for (size_t i = 0; i < client_bytes.size(); ++i) client_bytes[i] = static_cast<uint8_t>(0xC0 + i);
  for (size_t i = 0; i < server_bytes.size(); ++i) server_bytes[i] = static_cast<uint8_t>(0x50 + i);
  const std::vector<uint8_t> client_sent = client_bytes;
  const std::vector<uint8_t> server_sent = server_bytes;
  rpma_conn_private_data client_pdata = {client_bytes.data(), 28};
  rpma_conn_private_data server_pdata = {server_bytes.data(), 14};

  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  // Before the server accepted, the client has no private data.
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(pair.peer, kLoopback, pair.port.c_str(), nullptr, &req));
  ASSERT_EQ(0, rpma_conn_req_connect(&req, &client_pdata, &pair.client));
  rpma_conn_private_data got = {&got, 99};
  ASSERT_EQ(0, rpma_conn_get_private_data(pair.client, &got));
  EXPECT_EQ(nullptr, got.ptr);
  EXPECT_EQ(0, got.len);

  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(pair.ep, nullptr, &incoming));
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming, &server_pdata, &pair.server));
  // The senders' buffers may be reused at once: the library keeps copies.
  memset(client_bytes.data(), 0, client_bytes.size());
  memset(server_bytes.data(), 0, server_bytes.size());
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_ESTABLISHED));

  ASSERT_EQ(0, rpma_conn_get_private_data(pair.client, &got));
  ASSERT_EQ(14, got.len);
  ASSERT_NE(nullptr, got.ptr);
  EXPECT_NE(static_cast<void*>(server_bytes.data()), got.ptr);
  EXPECT_EQ(0, memcmp(server_sent.data(), got.ptr, 14));

  ASSERT_EQ(0, rpma_conn_get_private_data(pair.server, &got));
  ASSERT_EQ(28, got.len);
  ASSERT_NE(nullptr, got.ptr);
  EXPECT_NE(static_cast<void*>(client_bytes.data()), got.ptr);
  EXPECT_EQ(0, memcmp(client_sent.data(), got.ptr, 28));

  // Still valid (and unchanged) after disconnect and CLOSED, until rpma_conn_delete.
  ASSERT_EQ(0, rpma_conn_disconnect(pair.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_CLOSED));
  ASSERT_EQ(0, rpma_conn_get_private_data(pair.client, &got));
  ASSERT_EQ(14, got.len);
  EXPECT_EQ(0, memcmp(server_sent.data(), got.ptr, 14));
  ASSERT_EQ(0, rpma_conn_get_private_data(pair.server, &got));
  ASSERT_EQ(28, got.len);
  EXPECT_EQ(0, memcmp(client_sent.data(), got.ptr, 28));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnPrivateDataTest, NoneSentEitherWay) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  for (rpma_conn* conn : {pair.client, pair.server}) {
    rpma_conn_private_data got = {&got, 99};
    ASSERT_EQ(0, rpma_conn_get_private_data(conn, &got));
    EXPECT_EQ(nullptr, got.ptr);
    EXPECT_EQ(0, got.len);
  }
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(ConnPrivateDataTest, OnlyTheServerSends) {
  uint32_t value = 0xA1B2C3D4;
  rpma_conn_private_data server_pdata = {&value, sizeof(value)};
  PairOptions options;
  options.server_pdata = &server_pdata;
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect(options));
  rpma_conn_private_data got = {nullptr, 0};
  ASSERT_EQ(0, rpma_conn_get_private_data(pair.client, &got));
  ASSERT_EQ(sizeof(value), got.len);
  EXPECT_EQ(0, memcmp(&value, got.ptr, sizeof(value)));
  got = {&got, 99};
  ASSERT_EQ(0, rpma_conn_get_private_data(pair.server, &got));
  EXPECT_EQ(nullptr, got.ptr);
  EXPECT_EQ(0, got.len);
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

}  // namespace
