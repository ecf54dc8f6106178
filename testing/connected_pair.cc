// connected_pair.cc -- the kit's connected client/server pair: both sides in the test's
// process (the server's code, if any, on a thread of its own), or the server in a child
// process that runs the test again (test_child.h) and talks to the parent in lines over a
// socket pair:
//
//   child:  PORT <port>                       listening
//   child:  SERVER <descriptor> <peer cfg|->  connected and registered
//   parent: CLIENT <descriptor>               registered
//   ...     the test body (the parent) and PairOptions::server_main (the child)
//   parent: BYE                               tearing down: the client disconnects next
#include <poll.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <sstream>

#include "rpma_sim/testing.h"
#include "testing/side_setup.h"
#include "testing/test_child.h"

namespace rpma_sim {
namespace testing {
namespace {

constexpr char kServerRole[] = "server";
constexpr int kListenAttempts = 5;
// How long a server child waits for the parent's BYE: the whole test body, so no safety net
// of the kit's but the parent's end (EOF when it dies).
constexpr int kWholeTestMs = 3600 * 1000;

// A line `word arg...`, split at spaces.
std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

}  // namespace

ConnectedPair::ConnectedPair() = default;

ConnectedPair::~ConnectedPair() {
  if (server_thread_.valid()) JoinServerThread();  // before what it uses goes away
  ReleaseSide(&client_, false);
  ReleaseSide(&server_, false);
  if (ep_ != nullptr) (void)rpma_ep_shutdown(&ep_);
  if (client_.peer != nullptr) (void)rpma_peer_delete(&client_.peer);
  if (server_.peer != nullptr) (void)rpma_peer_delete(&server_.peer);
}

void ConnectedPair::Connect(const PairOptions& options) {
  ASSERT_EQ(nullptr, client_.conn) << "Connect called twice";
  ASSERT_FALSE(options.server_in_child && options.server_in_thread)
      << "the server runs in a child or on a thread, not both";
  if (!options.server_in_child) {
    ASSERT_NO_FATAL_FAILURE(ConnectInProcess(options));
    if (options.server_in_thread && options.server_main) {
      std::function<void(Side&)> server_main = options.server_main;
      server_thread_ =
          std::async(std::launch::async, [this, server_main] { server_main(server_); });
    }
    return;
  }
  rpma_sim_transport transport = RPMA_SIM_TRANSPORT_AUTO;
  ASSERT_EQ(0, rpma_sim_get_transport(&transport));
  ASSERT_NE(RPMA_SIM_TRANSPORT_INPROC, transport)
      << "server_in_child needs the shm, tcp or auto transport: over inproc a connection "
         "reaches only listeners of its own process, so the child's server would reject it";
  std::string role;
  int fd = -1;
  if (ChildRole(&role, &fd) && role == kServerRole) {
    Serve(options, fd);
    Teardown();
    fflush(stdout);
    fflush(stderr);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  ConnectToChild(options);
}

void ConnectedPair::Listen() {
  for (int attempt = 0; attempt < kListenAttempts && ep_ == nullptr; ++attempt) {
    port_ = FreeTcpPort();  // another process may take it before the bind: try again
    if (!port_.empty()) (void)rpma_ep_listen(server_.peer, kLoopback, port_.c_str(), &ep_);
  }
  ASSERT_NE(nullptr, ep_) << "no free port to listen on";
}

void ConnectedPair::Accept(const PairOptions& options) {
  // The endpoint's fd is readable once a request is there; only then is it taken, so a
  // client that never comes is a failure after the timeout, not a hang.
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
  pollfd pfd = {fd, POLLIN, 0};
  ASSERT_EQ(1, poll(&pfd, 1, TimeoutMs())) << "no connection request came";
  ConnectRequest(
      options,
      [this](const rpma_conn_cfg* cfg, rpma_conn_req** request) {
        return rpma_ep_next_conn_req(ep_, cfg, request);
      },
      options.server_private_data, &server_.conn);
}

void ConnectedPair::ClientConnect(const PairOptions& options) {
  ASSERT_NO_FATAL_FAILURE(NewPeer(&client_.peer));
  ConnectRequest(
      options,
      [this](const rpma_conn_cfg* cfg, rpma_conn_req** request) {
        return rpma_conn_req_new(client_.peer, kLoopback, port_.c_str(), cfg, request);
      },
      options.client_private_data, &client_.conn);
}

void ConnectedPair::ConnectInProcess(const PairOptions& options) {
  ASSERT_NO_FATAL_FAILURE(NewPeer(&server_.peer));
  if (options.arm_power_failure) {
    ASSERT_EQ(0, rpma_sim_power_failure_arm(server_.peer));
  }
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(ClientConnect(options));
  ASSERT_NO_FATAL_FAILURE(Accept(options));
  ASSERT_CONN_EVENT(client_.conn, RPMA_CONN_ESTABLISHED);
  ASSERT_CONN_EVENT(server_.conn, RPMA_CONN_ESTABLISHED);
  ASSERT_NO_FATAL_FAILURE(
      RegisterMemory(&server_, options.server_region_size, options.server_usage));
  ASSERT_NO_FATAL_FAILURE(
      RegisterMemory(&client_, options.client_region_size, options.client_usage));
  std::string server_mr, client_mr, peer_cfg;
  ASSERT_NO_FATAL_FAILURE(DescribeMemory(server_, &server_mr));
  ASSERT_NO_FATAL_FAILURE(DescribeMemory(client_, &client_mr));
  ASSERT_NO_FATAL_FAILURE(LearnRemote(&client_, server_mr));
  ASSERT_NO_FATAL_FAILURE(LearnRemote(&server_, client_mr));
  if (options.direct_write_to_pmem) {
    ASSERT_NO_FATAL_FAILURE(DescribePeerCfg(&peer_cfg));
    ASSERT_NO_FATAL_FAILURE(ApplyPeerCfg(client_.conn, peer_cfg));
  }
}

void ConnectedPair::Serve(const PairOptions& options, int fd) {
  std::string buffered, line;
  ASSERT_NO_FATAL_FAILURE(NewPeer(&server_.peer));
  if (options.arm_power_failure) {
    ASSERT_EQ(0, rpma_sim_power_failure_arm(server_.peer));
  }
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_TRUE(WriteLineTo(fd, "PORT " + port_));
  ASSERT_NO_FATAL_FAILURE(Accept(options));
  ASSERT_CONN_EVENT(server_.conn, RPMA_CONN_ESTABLISHED);
  ASSERT_NO_FATAL_FAILURE(
      RegisterMemory(&server_, options.server_region_size, options.server_usage));
  std::string server_mr, peer_cfg = "-";
  ASSERT_NO_FATAL_FAILURE(DescribeMemory(server_, &server_mr));
  if (options.direct_write_to_pmem) {
    ASSERT_NO_FATAL_FAILURE(DescribePeerCfg(&peer_cfg));
  }
  ASSERT_TRUE(WriteLineTo(fd, "SERVER " + server_mr + " " + peer_cfg));
  ASSERT_TRUE(ReadLineFrom(fd, TimeoutMs(), &buffered, &line)) << "the client did not answer";
  std::vector<std::string> words = Words(line);
  ASSERT_TRUE(words.size() == 2 && words[0] == "CLIENT") << "the client said: " << line;
  ASSERT_NO_FATAL_FAILURE(LearnRemote(&server_, words[1]));
  if (options.server_main) {
    options.server_main(server_);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The client's teardown says BYE before it disconnects (or the parent is gone: EOF).
  (void)ReadLineFrom(fd, kWholeTestMs, &buffered, &line);
}

void ConnectedPair::ConnectToChild(const PairOptions& options) {
  child_.reset(new TestChild);
  ASSERT_TRUE(child_->Start(kServerRole, -1)) << "cannot start the server's process";
  std::string line;
  ASSERT_TRUE(child_->ReadLine(TimeoutMs(), &line))
      << "the server's process did not start listening (its output is above)";
  std::vector<std::string> words = Words(line);
  ASSERT_TRUE(words.size() == 2 && words[0] == "PORT") << "the server said: " << line;
  port_ = words[1];
  ASSERT_NO_FATAL_FAILURE(ClientConnect(options));
  ASSERT_CONN_EVENT(client_.conn, RPMA_CONN_ESTABLISHED);
  ASSERT_NO_FATAL_FAILURE(
      RegisterMemory(&client_, options.client_region_size, options.client_usage));
  ASSERT_TRUE(child_->ReadLine(TimeoutMs(), &line))
      << "the server's process did not send its descriptor (its output is above)";
  words = Words(line);
  ASSERT_TRUE(words.size() == 3 && words[0] == "SERVER") << "the server said: " << line;
  ASSERT_NO_FATAL_FAILURE(LearnRemote(&client_, words[1]));
  if (words[2] != "-") {
    ASSERT_NO_FATAL_FAILURE(ApplyPeerCfg(client_.conn, words[2]));
  }
  std::string client_mr;
  ASSERT_NO_FATAL_FAILURE(DescribeMemory(client_, &client_mr));
  ASSERT_TRUE(child_->WriteLine("CLIENT " + client_mr));
}

void ConnectedPair::JoinServerThread() {
  if (server_thread_.wait_for(std::chrono::milliseconds(TimeoutMs())) !=
      std::future_status::ready) {
    ADD_FAILURE() << "the server's thread (PairOptions::server_main) did not return within "
                  << TimeoutMs() << " ms; disconnecting both sides to end its waits";
    if (client_.conn != nullptr) (void)rpma_conn_disconnect(client_.conn);
    if (server_.conn != nullptr) (void)rpma_conn_disconnect(server_.conn);
  }
  server_thread_.get();
}

void ConnectedPair::Teardown() {
  if (server_thread_.valid()) JoinServerThread();
  if (child_ != nullptr) (void)child_->WriteLine("BYE");
  ASSERT_NO_FATAL_FAILURE(EndConnection(&client_));
  ASSERT_NO_FATAL_FAILURE(EndConnection(&server_));
  ReleaseSide(&client_, true);
  ReleaseSide(&server_, true);
  if (ep_ != nullptr) {
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
  }
  if (client_.peer != nullptr) {
    EXPECT_EQ(0, rpma_peer_delete(&client_.peer));
  }
  if (server_.peer != nullptr) {
    EXPECT_EQ(0, rpma_peer_delete(&server_.peer));
  }
  if (child_ != nullptr) {
    int status = 0;
    bool ended = child_->Wait(TimeoutMs(), &status);
    child_.reset();
    ASSERT_TRUE(ended) << "the server's process did not end within " << TimeoutMs()
                       << " ms and was killed (its output is above)";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the server's process failed (wait status " << status << "; its output is above)";
  }
}

}  // namespace testing
}  // namespace rpma_sim
