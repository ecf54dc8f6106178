// fd_exhaustion_test.cc -- running out of file descriptors is a clean error from the call
// that needed one, never a hang, and nothing is lost once fds are free again. Over TCP in one
// process (RPMA_SIM_TRANSPORT=tcp): each connection takes a socket on each side.
//   - The server side has none left for the accepted socket: the listener answers that
//     request with REJECT through the fd it keeps spare, so the client reads
//     RPMA_CONN_REJECTED (and the server's application never sees the request).
//   - The client side has none left for its socket: rpma_conn_req_connect fails with
//     RPMA_E_PROVIDER.
// The limit is RLIMIT_NOFILE, lowered around the attempt so that exactly the fds wanted are
// left; waits that need no fd (rpma_conn_next_event) are used meanwhile.
#include <librpma.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/common/kept_log.h"
#include "tests/common/test_support.h"

namespace {

class FdExhaustionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &saved_));
    ASSERT_EQ(0, rpma_log_set_function(KeepLogLine));
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer_));
    port_ = FreeTcpPort();
    ASSERT_EQ(0, rpma_ep_listen(peer_, kLoopback, port_.c_str(), &ep_));
  }

  void TearDown() override {
    RestoreLimit();
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
    EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
  }

  // Lowers the soft limit so that `left` more fds can be made (the lowest free numbers).
  void LeaveFds(int left) {
    int lowest_free = dup(0);
    ASSERT_GE(lowest_free, 0);
    close(lowest_free);
    rlimit lowered = saved_;
    lowered.rlim_cur = static_cast<rlim_t>(lowest_free + left);
    ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &lowered));
  }

  void RestoreLimit() { EXPECT_EQ(0, setrlimit(RLIMIT_NOFILE, &saved_)); }

  // The connection's next event, by the blocking call (it needs no fd), with a safety net.
  rpma_conn_event NextEventBlocking(rpma_conn* conn) {
    std::promise<rpma_conn_event> promise;
    std::future<rpma_conn_event> event = promise.get_future();
    std::thread waiter([conn, &promise] {
      rpma_conn_event got = RPMA_CONN_UNDEFINED;
      int ret = rpma_conn_next_event(conn, &got);
      promise.set_value(ret == 0 ? got : RPMA_CONN_UNDEFINED);
    });
    if (event.wait_for(std::chrono::milliseconds(kSafetyTimeoutMs)) != std::future_status::ready) {
      fprintf(stderr, "FAILURE: no connection event within %d ms\n", kSafetyTimeoutMs);
      fflush(nullptr);
      _exit(1);  // the waiter is stuck for good: nothing to clean up safely
    }
    waiter.join();
    return event.get();
  }

  rlimit saved_{};
  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
};

TEST_F(FdExhaustionTest, ServerOutOfFdsRejectsTheRequestAndRecovers) {
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  // One fd left: the client's socket takes it, the server's accept finds none.
  ASSERT_NO_FATAL_FAILURE(LeaveFds(1));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  EXPECT_EQ(RPMA_CONN_REJECTED, NextEventBlocking(client));
  RestoreLimit();
  EXPECT_EQ(0, rpma_conn_delete(&client));
  int ep_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
  EXPECT_FALSE(IsReadableNow(ep_fd)) << "the refused request reached the application";
  EXPECT_NE(std::string::npos,
            LoggedLines().find("out of file descriptors: a connection request was rejected"))
      << LoggedLines();

  // With fds free again the next connection works.
  rpma_conn *again = nullptr, *server = nullptr;
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer_, ep_, port_, PairOptions(), &again, &server));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&again, &server));
}

TEST_F(FdExhaustionTest, ClientOutOfFdsFailsTheConnectCall) {
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  ASSERT_NO_FATAL_FAILURE(LeaveFds(0));
  rpma_conn* client = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_connect(&req, nullptr, &client));
  RestoreLimit();
  EXPECT_EQ(nullptr, req);
  EXPECT_EQ(nullptr, client);
  EXPECT_NE(std::string::npos, LoggedLines().find("cannot make a socket")) << LoggedLines();

  rpma_conn *again = nullptr, *server = nullptr;
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer_, ep_, port_, PairOptions(), &again, &server));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&again, &server));
}

}  // namespace
