// fd_exhaustion_auto_test.cc -- running out of file descriptors between two processes of one
// host with RPMA_SIM_TRANSPORT unset (auto, which offers the server a shared-memory segment).
// The server runs in a child process (this binary re-executed, child_process.h): within one
// process auto connects in process and takes no fd at all.
//   - A client with one fd left still connects: the segment would take that fd before the
//     socket could, so the connection goes on over TCP without it.
//   - The progress engine's own fds (asio makes them with its first socket or timer, and
//     throws if it cannot) are made by rpma_peer_new: with one fd left it fails with
//     RPMA_E_PROVIDER instead of ending the process, and a later call that needs them
//     finds them made: a first connect whose address never answers (its timeout is the
//     process's first timer) still times out, and a first listen fails cleanly.
// The limit is RLIMIT_NOFILE, lowered around the call so that exactly the fds wanted are left.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <functional>
#include <string>

#include "tests/integration/child_process.h"
#include "tests/integration/integration_support.h"

namespace {

using integration::ChildFail;
using integration::kLoopback;
using integration::kSafetyTimeoutMs;

// Lowers the soft limit so that one more fd can be made (the lowest free number); returns
// the limit to restore.
rlimit LeaveOneFd() {
  rlimit saved{};
  getrlimit(RLIMIT_NOFILE, &saved);
  int lowest_free = dup(0);
  close(lowest_free);
  rlimit lowered = saved;
  lowered.rlim_cur = static_cast<rlim_t>(lowest_free + 1);
  setrlimit(RLIMIT_NOFILE, &lowered);
  return saved;
}

// Says "RESULT <ret>" on the pipe.
void SayResult(int pipe_fd, int ret) {
  std::string line = "RESULT " + std::to_string(ret) + "\n";
  if (!integration::WriteAll(pipe_fd, line.data(), line.size())) _exit(5);
}

// Calls `call` with one fd left (the limit restored after it) and says what it returned.
void SayResultWithOneFdLeft(int pipe_fd, const std::function<int()>& call) {
  rlimit saved = LeaveOneFd();
  int ret = call();
  setrlimit(RLIMIT_NOFILE, &saved);
  SayResult(pipe_fd, ret);
}

rpma_peer* NewPeer(int pipe_fd, int type) {
  ibv_context* ibv_ctx = nullptr;
  int ret = rpma_utils_get_ibv_context(kLoopback, static_cast<rpma_util_ibv_context_type>(type),
                                       &ibv_ctx);
  if (ret) ChildFail(pipe_fd, "rpma_utils_get_ibv_context", ret);
  rpma_peer* peer = nullptr;
  if ((ret = rpma_peer_new(ibv_ctx, &peer))) ChildFail(pipe_fd, "rpma_peer_new", ret);
  return peer;
}

// --child-server PIPE_FD COUNT: listens, says "PORT <port>", then COUNT times accepts a
// connection, says "ESTABLISHED", waits for its end and says "CLOSED".
int ChildServer(int pipe_fd, int count) {
  rpma_peer* peer = NewPeer(pipe_fd, RPMA_UTIL_IBV_CONTEXT_LOCAL);
  rpma_ep* ep = integration::ChildListen(pipe_fd, peer);
  for (int i = 0; i < count; ++i) {
    rpma_conn_req* req = nullptr;
    int ret = rpma_ep_next_conn_req(ep, nullptr, &req);
    if (ret) ChildFail(pipe_fd, "rpma_ep_next_conn_req", ret);
    rpma_conn* conn = nullptr;
    if ((ret = rpma_conn_req_connect(&req, nullptr, &conn)))
      ChildFail(pipe_fd, "rpma_conn_req_connect", ret);
    for (rpma_conn_event expected : {RPMA_CONN_ESTABLISHED, RPMA_CONN_CLOSED}) {
      rpma_conn_event event = RPMA_CONN_UNDEFINED;
      if ((ret = rpma_conn_next_event(conn, &event)))
        ChildFail(pipe_fd, "rpma_conn_next_event", ret);
      std::string line = event == expected
                             ? (event == RPMA_CONN_CLOSED ? "CLOSED\n" : "ESTABLISHED\n")
                             : std::string("ERROR got ") + rpma_utils_conn_event_2str(event) + "\n";
      if (!integration::WriteAll(pipe_fd, line.data(), line.size())) _exit(5);
    }
    if ((ret = rpma_conn_delete(&conn))) ChildFail(pipe_fd, "rpma_conn_delete", ret);
  }
  rpma_ep_shutdown(&ep);
  rpma_peer_delete(&peer);
  return 0;
}

// --child-first-peer PIPE_FD: this process's first rpma_peer_new, with one fd left, then
// another with fds to spare; says "RESULT <return>" for each.
int ChildFirstPeer(int pipe_fd) {
  ibv_context* ibv_ctx = nullptr;
  int ret = rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
  if (ret) ChildFail(pipe_fd, "rpma_utils_get_ibv_context", ret);
  rpma_peer* peer = nullptr;
  SayResultWithOneFdLeft(pipe_fd, [&] { return rpma_peer_new(ibv_ctx, &peer); });
  if (peer != nullptr) ChildFail(pipe_fd, "a failed rpma_peer_new gave a peer", 0);
  SayResult(pipe_fd, rpma_peer_new(ibv_ctx, &peer));
  rpma_peer_delete(&peer);
  return 0;
}

// --child-unreachable PIPE_FD PORT: this process's first connect, with one fd left, to an
// address that never answers (a fault rule): its timeout is the process's first timer.
// Says "RESULT <rpma_conn_req_connect's return>", then "EVENT <the connection's event>".
int ChildUnreachable(int pipe_fd, const char* port) {
  int ret = rpma_sim_fault_add("unreachable:nth=1");
  if (ret) ChildFail(pipe_fd, "rpma_sim_fault_add", ret);
  rpma_peer* peer = NewPeer(pipe_fd, RPMA_UTIL_IBV_CONTEXT_REMOTE);
  rpma_conn_cfg* cfg = nullptr;
  if ((ret = rpma_conn_cfg_new(&cfg))) ChildFail(pipe_fd, "rpma_conn_cfg_new", ret);
  if ((ret = rpma_conn_cfg_set_timeout(cfg, 100)))
    ChildFail(pipe_fd, "rpma_conn_cfg_set_timeout", ret);
  rpma_conn_req* req = nullptr;
  if ((ret = rpma_conn_req_new(peer, kLoopback, port, cfg, &req)))
    ChildFail(pipe_fd, "rpma_conn_req_new", ret);
  rpma_conn* conn = nullptr;
  SayResultWithOneFdLeft(pipe_fd, [&] { return rpma_conn_req_connect(&req, nullptr, &conn); });
  if (conn == nullptr) return 0;
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ret = integration::NextEvent(conn, kSafetyTimeoutMs, &event);
  std::string line = "EVENT " + std::to_string(ret == 0 ? event : -1) + "\n";
  if (!integration::WriteAll(pipe_fd, line.data(), line.size())) _exit(5);
  rpma_conn_delete(&conn);
  rpma_conn_cfg_delete(&cfg);
  rpma_peer_delete(&peer);
  return 0;
}

// --child-first-listen PIPE_FD: this process's first listen, with one fd left (a listener
// takes two: its socket and the spare it answers with when out of fds); says
// "RESULT <rpma_ep_listen's return>".
int ChildFirstListen(int pipe_fd) {
  rpma_peer* peer = NewPeer(pipe_fd, RPMA_UTIL_IBV_CONTEXT_LOCAL);
  const std::string port = integration::FreeTcpPort();
  rpma_ep* ep = nullptr;
  SayResultWithOneFdLeft(pipe_fd,
                         [&] { return rpma_ep_listen(peer, kLoopback, port.c_str(), &ep); });
  if (ep != nullptr) rpma_ep_shutdown(&ep);
  rpma_peer_delete(&peer);
  return 0;
}

// The next event of `conn` (with the safety timeout).
rpma_conn_event NextEvent(rpma_conn* conn) {
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  int ret = integration::NextEvent(conn, kSafetyTimeoutMs, &event);
  return ret == 0 ? event : RPMA_CONN_UNDEFINED;
}

TEST(FdExhaustionAutoTest, AClientWithOneFdLeftGoesOnOverTcp) {
  integration::Child child("--child-server", {"2"});
  ASSERT_TRUE(child.started());
  std::string line;
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("PORT ", &line, /*prefix=*/true));
  const std::string port = line.substr(5);
  ibv_context* ibv_ctx = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx));
  rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ibv_ctx, &peer));

  // With fds to spare: shared memory (and the progress engine's own fds made).
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req));
  rpma_conn* conn = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &conn));
  EXPECT_EQ(RPMA_CONN_ESTABLISHED, NextEvent(conn));
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("ESTABLISHED", &line));
  EXPECT_TRUE(integration::MapsSharedMemorySegment());
  ASSERT_EQ(0, rpma_conn_disconnect(conn));
  EXPECT_EQ(RPMA_CONN_CLOSED, NextEvent(conn));
  ASSERT_EQ(0, rpma_conn_delete(&conn));
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("CLOSED", &line));

  // One fd left: over TCP.
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req));
  rlimit saved = LeaveOneFd();
  int ret = rpma_conn_req_connect(&req, nullptr, &conn);
  ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &saved));
  ASSERT_EQ(0, ret) << rpma_err_2str(ret);
  EXPECT_EQ(RPMA_CONN_ESTABLISHED, NextEvent(conn));
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("ESTABLISHED", &line));
  EXPECT_FALSE(integration::MapsSharedMemorySegment()) << "the connection has a segment";
  ASSERT_EQ(0, rpma_conn_disconnect(conn));
  EXPECT_EQ(RPMA_CONN_CLOSED, NextEvent(conn));
  ASSERT_EQ(0, rpma_conn_delete(&conn));
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("CLOSED", &line));
  int status = -1;
  ASSERT_NO_FATAL_FAILURE(child.Reap(&status));
  EXPECT_EQ(0, status);
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

TEST(FdExhaustionAutoTest, AProcesssFirstPeerWithOneFdLeftFailsTheCall) {
  integration::Child child("--child-first-peer", {});
  ASSERT_TRUE(child.started());
  std::string line;
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("RESULT " + std::to_string(RPMA_E_PROVIDER), &line));
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("RESULT 0", &line));
  int status = -1;
  ASSERT_NO_FATAL_FAILURE(child.Reap(&status));
  EXPECT_EQ(0, status);
}

TEST(FdExhaustionAutoTest, AFirstConnectThatNeverHearsBackWithOneFdLeftTimesOut) {
  integration::Child child("--child-unreachable", {integration::FreeTcpPort()});
  ASSERT_TRUE(child.started());
  std::string line;
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("RESULT 0", &line));
  ASSERT_NO_FATAL_FAILURE(
      child.ExpectLine("EVENT " + std::to_string(RPMA_CONN_UNREACHABLE), &line));
  int status = -1;
  ASSERT_NO_FATAL_FAILURE(child.Reap(&status));
  EXPECT_EQ(0, status);
}

TEST(FdExhaustionAutoTest, AProcesssFirstListenWithOneFdLeftFailsTheCall) {
  integration::Child server("--child-first-listen", {});
  ASSERT_TRUE(server.started());
  std::string line;
  ASSERT_NO_FATAL_FAILURE(server.ExpectLine("RESULT " + std::to_string(RPMA_E_PROVIDER), &line));
  int status = -1;
  ASSERT_NO_FATAL_FAILURE(server.Reap(&status));
  EXPECT_EQ(0, status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "--child-server") == 0)
    return ChildServer(atoi(argv[2]), atoi(argv[3]));
  if (argc >= 3 && strcmp(argv[1], "--child-first-listen") == 0)
    return ChildFirstListen(atoi(argv[2]));
  if (argc >= 3 && strcmp(argv[1], "--child-first-peer") == 0) return ChildFirstPeer(atoi(argv[2]));
  if (argc >= 4 && strcmp(argv[1], "--child-unreachable") == 0)
    return ChildUnreachable(atoi(argv[2]), argv[3]);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
