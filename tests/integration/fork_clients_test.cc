// fork_clients_test.cc -- programs shaped like librpma's multi-threaded tests, whose server
// forks its clients: each child made by fork() after its parent listened and accepted the
// clients before connects to its parent and moves data while they stay connected; and what
// a child inherited does not outlive its parent: a client sees its server die (LOST) and a
// shut down endpoint refuses (REJECTED) while a child of the server lives on.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/integration/child_process.h"
#include "tests/integration/fork_support.h"
#include "tests/integration/integration_support.h"

// A child of a multi-threaded process starts threads of its own (its progress engine):
// ThreadSanitizer supports that only when asked to.
extern "C" const char* __tsan_default_options() { return "die_after_fork=0"; }

namespace {

using forktest::Outcome;
using integration::kLoopback;
using integration::kSafetyTimeoutMs;

const char* TransportName(rpma_sim_transport transport) {
  switch (transport) {
    case RPMA_SIM_TRANSPORT_AUTO:
      return "auto";
    case RPMA_SIM_TRANSPORT_SHM:
      return "shm";
    case RPMA_SIM_TRANSPORT_TCP:
      return "tcp";
    default:
      return "?";
  }
}

class ForkClientsTest : public ::testing::TestWithParam<rpma_sim_transport> {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, rpma_sim_get_transport(&initial_));
    ASSERT_EQ(0, rpma_sim_set_transport(GetParam()));
    // The server of ForkingServer, exec'd, learns the transport from the environment.
    ASSERT_EQ(0, setenv("RPMA_SIM_TRANSPORT", TransportName(GetParam()), 1));
  }
  void TearDown() override { EXPECT_EQ(0, rpma_sim_set_transport(initial_)); }

  rpma_sim_transport initial_ = RPMA_SIM_TRANSPORT_AUTO;
};

constexpr int kClients = 4;

// The server connects each client it forks before it forks the next, so that client k
// inherits the server's connections to clients 0..k-1 (and its listener); all of them write
// into their own slot and stay connected until the server lets them go.
TEST_P(ForkClientsTest, AServerForksItsClientsOneAfterAnother) {
  rpma_peer* peer = nullptr;
  ibv_context* device = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device));
  ASSERT_EQ(0, rpma_peer_new(device, &peer));
  rpma_ep* ep = nullptr;
  std::string port;
  ASSERT_EQ(0, integration::ListenOnFreePort(peer, &ep, &port));
  std::vector<uint8_t> region(forktest::kRegionSize, 0);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, region.data(), region.size(),
                           RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &mr));
  int go[2];
  ASSERT_EQ(0, pipe(go));
  int pids[kClients];
  int outcome_fds[kClients];
  rpma_conn* conns[kClients] = {};
  for (int k = 0; k < kClients; ++k) {
    pids[k] = forktest::ForkChild(&outcome_fds[k], [&, k]() -> Outcome {
      close(go[1]);
      rpma_peer* own = nullptr;
      rpma_conn* conn = nullptr;
      Outcome outcome = forktest::ConnectOnly(port, &own, &conn);
      if (outcome.empty()) outcome = forktest::WriteAndReadBack(own, conn, 0x10 + k, k);
      if (!outcome.empty()) return outcome;
      std::string nothing;
      (void)integration::ReadLine(go[0], kSafetyTimeoutMs, &nothing);  // the end: go
      outcome = forktest::DisconnectAndDelete(&conn);
      if (outcome.empty() && rpma_peer_delete(&own) != 0) outcome = "rpma_peer_delete failed";
      return outcome;
    });
    ASSERT_GT(pids[k], 0);
    ASSERT_EQ("", forktest::Accept(ep, mr, &conns[k])) << "client " << k;
  }
  close(go[0]);
  close(go[1]);  // every client goes
  for (int k = 0; k < kClients; ++k) {
    EXPECT_EQ("", forktest::ExpectEvent(conns[k], RPMA_CONN_CLOSED)) << "client " << k;
    EXPECT_EQ(0, rpma_conn_delete(&conns[k]));
    EXPECT_EQ("", forktest::ChildOutcome(pids[k], outcome_fds[k], kSafetyTimeoutMs))
        << "client " << k;
    EXPECT_EQ(0x10 + k, region[k * forktest::kSlotSize]) << "client " << k;
  }
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_EQ(0, rpma_ep_shutdown(&ep));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// The forking server (another process, so that the test can kill it): "PORT p", then in
// mode "die" it accepts one client ("ACCEPTED"); it forks a child that only waits
// ("FORKED <pid>"); in mode "shut" it then shuts its endpoint down ("SHUT"). Then it waits
// to be killed.
int ForkingServer(int pipe_fd, const std::string& mode) {
  ibv_context* device = nullptr;
  rpma_peer* peer = nullptr;
  if (rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device) != 0 ||
      rpma_peer_new(device, &peer) != 0)
    integration::ChildFail(pipe_fd, "peer", RPMA_E_PROVIDER);
  rpma_ep* ep = integration::ChildListen(pipe_fd, peer);
  std::vector<uint8_t> region(forktest::kRegionSize, 0);
  rpma_mr_local* mr = nullptr;
  int ret = rpma_mr_reg(peer, region.data(), region.size(), RPMA_MR_USAGE_WRITE_DST, &mr);
  if (ret != 0) integration::ChildFail(pipe_fd, "rpma_mr_reg", ret);
  rpma_conn* conn = nullptr;
  auto say = [pipe_fd](const std::string& line) {
    std::string text = line + "\n";
    if (!integration::WriteAll(pipe_fd, text.data(), text.size())) _exit(5);
  };
  if (mode == "die") {
    Outcome accepted = forktest::Accept(ep, mr, &conn);
    if (!accepted.empty()) integration::ChildFail(pipe_fd, accepted.c_str(), RPMA_E_PROVIDER);
    say("ACCEPTED");
  }
  // The waiter says it runs: fork() has returned in it, so it has closed its copies of the
  // server's sockets (before that, a connect could still reach the copy of the listener).
  int running[2];
  if (pipe(running) != 0) integration::ChildFail(pipe_fd, "pipe", RPMA_E_PROVIDER);
  pid_t waiter = fork();
  if (waiter == 0) {
    close(pipe_fd);
    close(running[0]);
    if (!integration::WriteAll(running[1], "R\n", 2)) _exit(5);
    close(running[1]);
    alarm(60);  // a safety net: the test kills it long before
    for (;;) pause();
  }
  close(running[1]);
  std::string nothing;
  if (waiter < 0 || !integration::ReadLine(running[0], kSafetyTimeoutMs, &nothing))
    integration::ChildFail(pipe_fd, "fork", RPMA_E_PROVIDER);
  close(running[0]);
  say("FORKED " + std::to_string(waiter));
  if (mode == "shut") {
    ret = rpma_ep_shutdown(&ep);
    if (ret != 0) integration::ChildFail(pipe_fd, "rpma_ep_shutdown", ret);
    say("SHUT");
  }
  for (;;) pause();
}

// The waiting child the server forked: killed by pid (it is the server's child, not ours).
void KillWaiter(const std::string& forked_line) {
  pid_t waiter = atoi(forked_line.c_str() + strlen("FORKED "));
  ASSERT_GT(waiter, 0);
  EXPECT_EQ(0, kill(waiter, SIGKILL));
}

// Its socket to the client was closed in the child as fork returned: the server's death
// ends the connection at once (a peer on this host has no keepalive to find it later).
TEST_P(ForkClientsTest, AClientSeesItsServerDieThoughTheServersChildLives) {
  integration::Child server("--forking-server", {"die"});
  std::string line;
  ASSERT_NO_FATAL_FAILURE(server.ExpectLine("PORT ", &line, /*prefix=*/true));
  const std::string port = line.substr(strlen("PORT "));
  rpma_peer* peer = nullptr;
  rpma_conn* conn = nullptr;
  ASSERT_EQ("", forktest::ConnectOnly(port, &peer, &conn));
  ASSERT_NO_FATAL_FAILURE(server.ExpectLine("ACCEPTED", nullptr));
  ASSERT_NO_FATAL_FAILURE(server.ExpectLine("FORKED ", &line, /*prefix=*/true));
  ASSERT_NO_FATAL_FAILURE(server.KillAndReap());
  EXPECT_EQ("", forktest::ExpectEvent(conn, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(KillWaiter(line));
  EXPECT_EQ(0, rpma_conn_delete(&conn));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// The listener's socket too: once the server shut its endpoint down, nobody listens there,
// and a connect is refused (REJECTED), not taken into a backlog nobody accepts from.
TEST_P(ForkClientsTest, AShutDownEndpointRefusesThoughTheServersChildLives) {
  integration::Child server("--forking-server", {"shut"});
  std::string line;
  ASSERT_NO_FATAL_FAILURE(server.ExpectLine("PORT ", &line, /*prefix=*/true));
  const std::string port = line.substr(strlen("PORT "));
  std::string forked;
  ASSERT_NO_FATAL_FAILURE(server.ExpectLine("FORKED ", &forked, /*prefix=*/true));
  ASSERT_NO_FATAL_FAILURE(server.ExpectLine("SHUT", nullptr));
  EXPECT_EQ("", forktest::ConnectAndWrite(port, 0, 0, /*expect_rejected=*/true));
  ASSERT_NO_FATAL_FAILURE(server.KillAndReap());
  ASSERT_NO_FATAL_FAILURE(KillWaiter(forked));
}

INSTANTIATE_TEST_SUITE_P(BetweenProcesses, ForkClientsTest,
                         ::testing::Values(RPMA_SIM_TRANSPORT_AUTO, RPMA_SIM_TRANSPORT_SHM,
                                           RPMA_SIM_TRANSPORT_TCP),
                         [](const ::testing::TestParamInfo<rpma_sim_transport>& info) {
                           return std::string(TransportName(info.param));
                         });

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "--forking-server") == 0)
    return ForkingServer(atoi(argv[2]), argv[3]);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
