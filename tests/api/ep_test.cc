// ep_test.cc -- rpma_ep_listen, rpma_ep_shutdown, rpma_ep_get_fd, rpma_ep_next_conn_req.
#include <librpma.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

class EpTest : public PeerFixture {
 protected:
  // A client connects to the endpoint; the server rejects it (rpma_conn_req_delete); the client
  // sees REJECTED and is deleted.
  void ConnectAndReject() { ConnectAndGetRejected(peer_, ep_, port_, false); }
};

// rpma_ep_listen

TEST_F(EpTest, ListenNullPeer) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_listen(nullptr, kLoopback, port_.c_str(), &ep_));
  EXPECT_EQ(nullptr, ep_);
}

TEST_F(EpTest, ListenNullAddr) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_listen(peer_, nullptr, port_.c_str(), &ep_));
  EXPECT_EQ(nullptr, ep_);
}

TEST_F(EpTest, ListenNullPort) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_listen(peer_, kLoopback, nullptr, &ep_));
  EXPECT_EQ(nullptr, ep_);
}

TEST_F(EpTest, ListenNullEpPtr) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_listen(peer_, kLoopback, port_.c_str(), nullptr));
}

TEST_F(EpTest, ListenSucceeds) {
  ASSERT_EQ(0, rpma_ep_listen(peer_, kLoopback, port_.c_str(), &ep_));
  EXPECT_NE(nullptr, ep_);
}

TEST_F(EpTest, ListenPortInUseByAnotherEndpoint) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_ep* second = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_ep_listen(peer_, kLoopback, port_.c_str(), &second));
  EXPECT_EQ(nullptr, second);
  if (second != nullptr) {
    EXPECT_EQ(0, rpma_ep_shutdown(&second));
  }
}

TEST_F(EpTest, ListenPortNotANumber) {
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_ep_listen(peer_, kLoopback, "abc", &ep_));
  EXPECT_EQ(nullptr, ep_);
}

TEST_F(EpTest, ListenPortOutOfRange) {
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_ep_listen(peer_, kLoopback, "70000", &ep_));
  EXPECT_EQ(nullptr, ep_);
}

TEST_F(EpTest, ListenAddressNotOwnedByHost) {
  // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never assigned to a host.
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_ep_listen(peer_, "192.0.2.1", port_.c_str(), &ep_));
  EXPECT_EQ(nullptr, ep_);
}

// rpma_ep_shutdown

TEST_F(EpTest, ShutdownNullEpPtr) { EXPECT_EQ(RPMA_E_INVAL, rpma_ep_shutdown(nullptr)); }

TEST_F(EpTest, ShutdownNullEp) { ExpectDeleteOfNullObjectReturnsZero(rpma_ep_shutdown); }

TEST_F(EpTest, ShutdownSetsNull) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
  EXPECT_EQ(nullptr, ep_);
}

TEST_F(EpTest, PortCanBeListenedOnAgainAfterShutdown) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_EQ(0, rpma_ep_shutdown(&ep_));
  ASSERT_EQ(nullptr, ep_);
  EXPECT_EQ(0, rpma_ep_listen(peer_, kLoopback, port_.c_str(), &ep_));
  EXPECT_NE(nullptr, ep_);
}

TEST_F(EpTest, PortCanBeListenedOnAgainAfterShutdownThatServedConnections) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn* server = nullptr;
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer_, ep_, port_, PairOptions(), &client, &server));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  ASSERT_NO_FATAL_FAILURE(ConnectAndReject());
  ASSERT_EQ(0, rpma_ep_shutdown(&ep_));
  ASSERT_EQ(0, rpma_ep_listen(peer_, kLoopback, port_.c_str(), &ep_));
  // ... and the new endpoint serves connections.
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer_, ep_, port_, PairOptions(), &client, &server));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&server, &client));
}

TEST_F(EpTest, ShutdownLeavesEstablishedConnectionsAlive) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn* server = nullptr;
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer_, ep_, port_, PairOptions(), &client, &server));
  ASSERT_EQ(0, rpma_ep_shutdown(&ep_));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(client));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(server));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
}

TEST_F(EpTest, ShutdownWithPendingRequestLeavesClientDeletable) {
  // A request that was never taken; rpma_conn_delete works in any state (semantics 5.6).
  ASSERT_NO_FATAL_FAILURE(Listen());
  int ep_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  ASSERT_TRUE(WaitReadable(ep_fd, kSafetyTimeoutMs));
  ASSERT_EQ(0, rpma_ep_shutdown(&ep_));
  EXPECT_EQ(0, rpma_conn_delete(&client));
  EXPECT_EQ(nullptr, client);
}

// rpma_ep_get_fd

TEST_F(EpTest, GetFdNullEp) {
  int fd = -1;
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_get_fd(nullptr, &fd));
}

TEST_F(EpTest, GetFdNullFd) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_get_fd(ep_, nullptr));
}

TEST_F(EpTest, GetFdIsARealPollableFd) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
  ASSERT_GE(fd, 0);
  EXPECT_NE(-1, fcntl(fd, F_GETFL));

  int epfd = epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(epfd, 0);
  epoll_event ev = {};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  EXPECT_EQ(0, epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev));
  epoll_event got = {};
  EXPECT_EQ(0, epoll_wait(epfd, &got, 1, 0));

  EXPECT_FALSE(IsReadableNow(fd)) << "readable before any client connected";

  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));

  EXPECT_TRUE(WaitReadable(fd, kSafetyTimeoutMs)) << "not readable after a client connected";
  EXPECT_EQ(1, epoll_wait(epfd, &got, 1, kSafetyTimeoutMs));
  EXPECT_EQ(fd, got.data.fd);
  // Level-triggered: still readable until the request is taken.
  EXPECT_TRUE(IsReadableNow(fd));

  rpma_conn_req* incoming = nullptr;
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming));
  EXPECT_FALSE(IsReadableNow(fd)) << "still readable after the only request was taken";
  EXPECT_EQ(0, epoll_wait(epfd, &got, 1, 0));
  close(epfd);

  ASSERT_EQ(0, rpma_conn_req_delete(&incoming));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_REJECTED));
  ASSERT_EQ(0, rpma_conn_delete(&client));
}

// rpma_ep_next_conn_req

TEST_F(EpTest, NextConnReqNullEp) {
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_next_conn_req(nullptr, nullptr, &req));
  EXPECT_EQ(nullptr, req);
}

TEST_F(EpTest, NextConnReqNullReqPtr) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_next_conn_req(ep_, nullptr, nullptr));
}

TEST_F(EpTest, NextConnReqNonBlockingWithoutRequestReturnsNoEvent) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(RPMA_E_NO_EVENT, rpma_ep_next_conn_req(ep_, nullptr, &req));
  EXPECT_EQ(nullptr, req);
  // Asking again changes nothing.
  EXPECT_EQ(RPMA_E_NO_EVENT, rpma_ep_next_conn_req(ep_, nullptr, &req));
  EXPECT_EQ(nullptr, req);
}

TEST_F(EpTest, NextConnReqNonBlockingWithPendingRequestSucceeds) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));

  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));

  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  rpma_conn_req* incoming = nullptr;
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming));
  ASSERT_NE(nullptr, incoming);
  // The only request was taken: the next call has nothing to return.
  rpma_conn_req* none = nullptr;
  EXPECT_EQ(RPMA_E_NO_EVENT, rpma_ep_next_conn_req(ep_, nullptr, &none));
  EXPECT_EQ(nullptr, none);

  // The request is usable: accept it.
  rpma_conn* server = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming, nullptr, &server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(server, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
}

TEST_F(EpTest, NextConnReqBlockingReturnsQueuedRequestsInTurn) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* clients[2] = {nullptr, nullptr};
  for (rpma_conn*& client : clients) {
    rpma_conn_req* req = nullptr;
    ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  }
  for (int i = 0; i < 2; ++i) {
    rpma_conn_req* incoming = nullptr;
    ASSERT_NO_FATAL_FAILURE(NextConnReq(ep_, nullptr, &incoming));
    ASSERT_EQ(0, rpma_conn_req_delete(&incoming));
  }
  for (rpma_conn*& client : clients) {
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_REJECTED));
    ASSERT_EQ(0, rpma_conn_delete(&client));
  }
}

}  // namespace
