// test_support.cc -- API-test helpers: free TCP ports, fd readiness, connected client/server pairs.
#include "tests/common/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <gtest/gtest.h>

std::string FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    ADD_FAILURE() << "socket: " << strerror(errno);
    return "";
  }
  sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_port = htons(0);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
    ADD_FAILURE() << "bind/getsockname: " << strerror(errno);
    close(fd);
    return "";
  }
  close(fd);
  return std::to_string(ntohs(addr.sin_port));
}

bool WaitReadable(int fd, int timeout_ms) {
  pollfd pfd;
  pfd.fd = fd;
  pfd.events = POLLIN;
  pfd.revents = 0;
  int ret;
  do {
    ret = poll(&pfd, 1, timeout_ms);
  } while (ret < 0 && errno == EINTR);
  return ret == 1 && (pfd.revents & POLLIN) != 0;
}

bool IsReadableNow(int fd) { return WaitReadable(fd, 0); }

void SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  ASSERT_NE(-1, flags) << "fcntl(F_GETFL): " << strerror(errno);
  ASSERT_EQ(0, fcntl(fd, F_SETFL, flags | O_NONBLOCK)) << "fcntl(F_SETFL): " << strerror(errno);
}

void NewLocalPeer(rpma_peer **peer_ptr) {
  ibv_context *ibv_ctx = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
  ASSERT_NE(nullptr, ibv_ctx);
  ASSERT_EQ(0, rpma_peer_new(ibv_ctx, peer_ptr));
  ASSERT_NE(nullptr, *peer_ptr);
}

void NextConnReq(rpma_ep *ep, const rpma_conn_cfg *cfg, rpma_conn_req **req_ptr) {
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep, &fd));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs)) << "no connection request arrived";
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep, cfg, req_ptr));
  ASSERT_NE(nullptr, *req_ptr);
}

void NextEvent(rpma_conn *conn, rpma_conn_event *event) {
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs)) << "no connection event arrived";
  ASSERT_EQ(0, rpma_conn_next_event(conn, event));
}

void ExpectNextEvent(rpma_conn *conn, rpma_conn_event expected) {
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_NO_FATAL_FAILURE(NextEvent(conn, &event));
  ASSERT_EQ(expected, event) << "got \"" << rpma_utils_conn_event_2str(event) << "\", expected \""
                             << rpma_utils_conn_event_2str(expected) << "\"";
}

void ExpectNoPendingEvent(rpma_conn *conn) {
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
  EXPECT_FALSE(IsReadableNow(fd)) << "an unexpected connection event is pending";
}

void ConnectOnce(rpma_peer *peer, rpma_ep *ep, const std::string &port, const PairOptions &options,
                 rpma_conn **client, rpma_conn **server) {
  rpma_conn_req *client_req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), options.client_cfg, &client_req));
  ASSERT_NE(nullptr, client_req);
  ASSERT_EQ(0, rpma_conn_req_connect(&client_req, options.client_pdata, client));
  ASSERT_EQ(nullptr, client_req);
  ASSERT_NE(nullptr, *client);

  rpma_conn_req *server_req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(ep, options.server_cfg, &server_req));
  ASSERT_EQ(0, rpma_conn_req_connect(&server_req, options.server_pdata, server));
  ASSERT_EQ(nullptr, server_req);
  ASSERT_NE(nullptr, *server);

  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*server, RPMA_CONN_ESTABLISHED));
}

void DisconnectAndDelete(rpma_conn **first, rpma_conn **second) {
  ASSERT_EQ(0, rpma_conn_disconnect(*first));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*first, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*second, RPMA_CONN_CLOSED));
  ASSERT_EQ(0, rpma_conn_disconnect(*second));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(*first));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(*second));
  ASSERT_EQ(0, rpma_conn_delete(first));
  ASSERT_EQ(nullptr, *first);
  ASSERT_EQ(0, rpma_conn_delete(second));
  ASSERT_EQ(nullptr, *second);
}

ConnectedPair::~ConnectedPair() {
  if (client != nullptr) (void)rpma_conn_delete(&client);
  if (server != nullptr) (void)rpma_conn_delete(&server);
  if (ep != nullptr) (void)rpma_ep_shutdown(&ep);
  if (peer != nullptr) (void)rpma_peer_delete(&peer);
}

void ConnectedPair::Listen() {
  if (peer == nullptr) {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  }
  if (ep != nullptr) return;
  port = FreeTcpPort();
  ASSERT_FALSE(port.empty());
  ASSERT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), &ep));
  ASSERT_NE(nullptr, ep);
}

void ConnectedPair::Connect(const PairOptions &options) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer, ep, port, options, &client, &server));
}

void ConnectedPair::Teardown() {
  if (client != nullptr && server != nullptr) {
    ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  }
  if (client != nullptr) {
    ASSERT_EQ(0, rpma_conn_delete(&client));
    ASSERT_EQ(nullptr, client);
  }
  if (server != nullptr) {
    ASSERT_EQ(0, rpma_conn_delete(&server));
    ASSERT_EQ(nullptr, server);
  }
  if (ep != nullptr) {
    ASSERT_EQ(0, rpma_ep_shutdown(&ep));
    ASSERT_EQ(nullptr, ep);
  }
  if (peer != nullptr) {
    ASSERT_EQ(0, rpma_peer_delete(&peer));
    ASSERT_EQ(nullptr, peer);
  }
}
