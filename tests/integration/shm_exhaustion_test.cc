// shm_exhaustion_test.cc -- a shared-memory segment that cannot be made is a clean error from
// the call that needed it, never a hang or a SIGBUS later, and nothing is lost once it can
// be made again. One process, RPMA_SIM_TRANSPORT=shm (a connection that must use shared
// memory): the client's rpma_conn_req_connect creates the segment and allocates its rings.
// The file-size limit (RLIMIT_FSIZE, SIGXFSZ ignored) stands in for a full /dev/shm: sizing
// the segment fails as allocating it does when tmpfs has no room.
#include <librpma.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>

#include <string>

#include <gtest/gtest.h>

#include "tests/common/kept_log.h"
#include "tests/common/test_support.h"

namespace {

TEST(ShmExhaustionTest, NoRoomForTheSegmentFailsTheConnectCallAndRecovers) {
  ASSERT_EQ(0, rpma_log_set_function(KeepLogLine));
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  std::string port = FreeTcpPort();
  rpma_ep* ep = nullptr;
  ASSERT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), &ep));

  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req));
  rlimit saved{};
  ASSERT_EQ(0, getrlimit(RLIMIT_FSIZE, &saved));
  rlimit lowered = saved;
  lowered.rlim_cur = 4096;  // far below a segment's header and two rings
  void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &lowered));
  rpma_conn* client = nullptr;
  int connected = rpma_conn_req_connect(&req, nullptr, &client);
  ASSERT_EQ(0, setrlimit(RLIMIT_FSIZE, &saved));
  signal(SIGXFSZ, saved_handler);
  EXPECT_EQ(RPMA_E_PROVIDER, connected);
  EXPECT_EQ(nullptr, req);
  EXPECT_EQ(nullptr, client);
  EXPECT_NE(std::string::npos, LoggedLines().find("cannot create shared memory segment"))
      << LoggedLines();
  int ep_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep, &ep_fd));
  EXPECT_FALSE(IsReadableNow(ep_fd)) << "a request reached the server without a segment";

  // With room again the next connection works, over shared memory.
  rpma_conn *again = nullptr, *server = nullptr;
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer, ep, port, PairOptions(), &again, &server));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&again, &server));
  EXPECT_EQ(0, rpma_ep_shutdown(&ep));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
  EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
}

}  // namespace
