// fork_test.cc -- a child made by fork() gets a simulator of its own, whatever its parent had
// done: with the parent at each stage (nothing used, a device context, a peer, listening,
// connected with traffic in flight), on each transport, the child closed and unmapped what
// it inherited, every call on a parent's handle fails with its documented code, the child
// connects to its parent and moves data, and the parent's own connection goes on working.
// Over the in-process transport the child cannot reach its parent (REJECTED, as from any
// other process) and works in process with itself.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/fork_support.h"
#include "tests/integration/integration_support.h"

// A child of a multi-threaded process starts threads of its own (its progress engine):
// ThreadSanitizer supports that only when asked to.
extern "C" const char* __tsan_default_options() { return "die_after_fork=0"; }

namespace {

using forktest::Outcome;
using integration::kLoopback;
using integration::kSafetyTimeoutMs;

enum class Stage { kNothing, kContext, kPeer, kListening, kConnected };

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kNothing:
      return "nothing";
    case Stage::kContext:
      return "context";
    case Stage::kPeer:
      return "peer";
    case Stage::kListening:
      return "listening";
    case Stage::kConnected:
      return "connected";
  }
  return "?";
}

const char* TransportName(rpma_sim_transport transport) {
  switch (transport) {
    case RPMA_SIM_TRANSPORT_AUTO:
      return "auto";
    case RPMA_SIM_TRANSPORT_INPROC:
      return "inproc";
    case RPMA_SIM_TRANSPORT_SHM:
      return "shm";
    case RPMA_SIM_TRANSPORT_TCP:
      return "tcp";
  }
  return "?";
}

// The parent's own connection (its client to its own endpoint) with a thread that writes
// into the server's region and reads it back, again and again, until told to stop.
// A thread moving data on the parent's connection, round after round. While the process
// forks it waits between posting a write and taking its completion, not in a call that
// allocates: GCC 12's AddressSanitizer allocator (as LLVM's before 18) takes no part in
// fork, and a child whose parent forked while another thread held its lock hung in its
// first allocation. (The simulator parks its own engine thread likewise.)
class Traffic {
 public:
  Traffic() {
    static const bool registered = pthread_atfork(PauseForFork, ResumeAfterFork, nullptr) == 0;
    (void)registered;
  }
  ~Traffic() { Stop(); }

  void Start(rpma_peer* peer, rpma_conn* client, rpma_mr_local* target) {
    std::vector<uint8_t> descriptor;
    ASSERT_EQ(0, integration::GetDescriptor(target, &descriptor));
    ASSERT_EQ(0, rpma_mr_remote_from_descriptor(descriptor.data(), descriptor.size(), &remote_));
    ASSERT_EQ(0, rpma_mr_reg(peer, bytes_, sizeof(bytes_),
                             RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &mr_));
    ASSERT_EQ(0, rpma_conn_get_cq(client, &cq_));
    client_ = client;
    thread_ = std::thread([this] {
      Run();
      std::lock_guard<std::mutex> lock(fork_mutex_);
      ended_ = true;  // a fork no longer waits for it
      fork_changed_.notify_all();
    });
    running_.store(this);
  }

  // Waits until `rounds` more rounds have completed (false after the safety timeout).
  bool WaitForRounds(int rounds) {
    const int target = rounds_.load() + rounds;
    const long long deadline = integration::NowMs() + kSafetyTimeoutMs;
    while (rounds_.load() < target && failure_.empty() && integration::NowMs() < deadline)
      std::this_thread::yield();
    return rounds_.load() >= target;
  }

  void Stop() {
    running_.store(nullptr);
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    if (remote_ != nullptr) EXPECT_EQ(0, rpma_mr_remote_delete(&remote_));
  }

  const std::string& failure() const { return failure_; }
  rpma_mr_local* mr() const { return mr_; }

 private:
  void Run() {
    for (uint8_t round = 1; !stop_; ++round) {
      memset(bytes_, round, forktest::kSlotSize);
      int ret = rpma_write(client_, remote_, 0, mr_, 0, forktest::kSlotSize,
                           RPMA_F_COMPLETION_ALWAYS, nullptr);
      WaitWhileForking();
      ibv_wc wc;
      if (ret == 0) ret = integration::NextCompletion(cq_, kSafetyTimeoutMs, &wc);
      if (ret == 0 && wc.status == IBV_WC_SUCCESS)
        ret = rpma_read(client_, mr_, forktest::kSlotSize, remote_, 0, forktest::kSlotSize,
                        RPMA_F_COMPLETION_ALWAYS, nullptr);
      if (ret == 0 && wc.status == IBV_WC_SUCCESS)
        ret = integration::NextCompletion(cq_, kSafetyTimeoutMs, &wc);
      if (ret != 0 || wc.status != IBV_WC_SUCCESS ||
          memcmp(bytes_, bytes_ + forktest::kSlotSize, forktest::kSlotSize) != 0) {
        failure_ = "round " + std::to_string(rounds_.load() + 1) + ": " +
                   (ret != 0 ? rpma_err_2str(ret) : ibv_wc_status_str(wc.status));
        return;
      }
      rounds_.fetch_add(1);
    }
  }

  // The handlers of pthread_atfork: the forking thread asks the running traffic to pause,
  // and waits (bounded) until it has; the parent lets it go on.
  static void PauseForFork() {
    Traffic* traffic = running_.load();
    if (traffic == nullptr) return;
    std::unique_lock<std::mutex> lock(traffic->fork_mutex_);
    traffic->forking_ = true;
    traffic->fork_changed_.wait_for(lock, std::chrono::milliseconds(kSafetyTimeoutMs),
                                    [traffic] { return traffic->paused_ || traffic->ended_; });
  }
  static void ResumeAfterFork() {
    Traffic* traffic = running_.load();
    if (traffic == nullptr) return;
    std::lock_guard<std::mutex> lock(traffic->fork_mutex_);
    traffic->forking_ = false;
    traffic->fork_changed_.notify_all();
  }
  void WaitWhileForking() {
    std::unique_lock<std::mutex> lock(fork_mutex_);
    if (!forking_) return;
    paused_ = true;
    fork_changed_.notify_all();
    fork_changed_.wait(lock, [this] { return !forking_; });
    paused_ = false;
  }

  static std::atomic<Traffic*> running_;
  std::mutex fork_mutex_;
  std::condition_variable fork_changed_;
  bool forking_ = false;  // under fork_mutex_
  bool paused_ = false;   // likewise
  bool ended_ = false;    // likewise
  uint8_t bytes_[2 * forktest::kSlotSize] = {};
  rpma_mr_remote* remote_ = nullptr;
  rpma_mr_local* mr_ = nullptr;
  rpma_cq* cq_ = nullptr;
  rpma_conn* client_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> rounds_{0};
  std::string failure_;  // written by the thread before it ends
};

std::atomic<Traffic*> Traffic::running_{nullptr};

class ForkTest : public ::testing::TestWithParam<std::tuple<rpma_sim_transport, Stage>> {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, rpma_sim_get_transport(&initial_));
    ASSERT_EQ(0, rpma_sim_set_transport(transport()));  // the child inherits the setting
  }
  void TearDown() override { EXPECT_EQ(0, rpma_sim_set_transport(initial_)); }

  rpma_sim_transport transport() const { return std::get<0>(GetParam()); }
  Stage stage() const { return std::get<1>(GetParam()); }
  bool InProcessOnly() const { return transport() == RPMA_SIM_TRANSPORT_INPROC; }

  // The parent's steps, each done before the fork if the stage has reached it, else after.
  void GetContext() {
    if (device_ == nullptr)
      ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device_));
  }
  void MakePeer() {
    ASSERT_NO_FATAL_FAILURE(GetContext());
    if (peer_ == nullptr) ASSERT_EQ(0, rpma_peer_new(device_, &peer_));
  }
  void Listen() {
    ASSERT_NO_FATAL_FAILURE(MakePeer());
    if (ep_ != nullptr) return;
    ASSERT_EQ(0, integration::ListenOnFreePort(peer_, &ep_, &port_));
    ASSERT_EQ(0, rpma_mr_reg(peer_, region_, sizeof(region_),
                             RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &region_mr_));
  }
  // The parent's own connection, and traffic on it.
  void ConnectToItself() {
    ASSERT_NO_FATAL_FAILURE(Listen());
    rpma_conn_req* req = nullptr;
    ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client_));
    int fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
    ASSERT_TRUE(integration::WaitReadable(fd, kSafetyTimeoutMs));
    ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &server_));
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(client_, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
    ASSERT_EQ(0, integration::NextEvent(server_, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
    ASSERT_NO_FATAL_FAILURE(traffic_.Start(peer_, client_, region_mr_));
    ASSERT_TRUE(traffic_.WaitForRounds(3)) << traffic_.failure();
  }

  void CloseOwnConnection() {
    traffic_.Stop();
    ASSERT_EQ(0, rpma_conn_disconnect(client_));
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(client_, kSafetyTimeoutMs, &event));
    EXPECT_EQ(RPMA_CONN_CLOSED, event);
    ASSERT_EQ(0, integration::NextEvent(server_, kSafetyTimeoutMs, &event));
    EXPECT_EQ(RPMA_CONN_CLOSED, event);
    EXPECT_EQ(0, rpma_conn_delete(&client_));
    EXPECT_EQ(0, rpma_conn_delete(&server_));
  }

  // The child: what it inherited is closed, refused, and its own simulator works.
  Outcome Child(int port_fd) {
    Outcome outcome = forktest::ExpectNothingOfTheParentsOpen();
    if (!outcome.empty()) return outcome;
    forktest::ParentHandles inherited;
    inherited.peer = peer_;
    inherited.ep = ep_;
    inherited.conn = client_;
    inherited.mr = region_mr_;
    outcome = forktest::ExpectInheritedRefused(&inherited);
    if (!outcome.empty()) return outcome;
    std::string port;
    if (!integration::ReadLine(port_fd, kSafetyTimeoutMs, &port)) return "no port from the parent";
    outcome = forktest::ConnectAndWrite(port, 0xc1, 2, InProcessOnly());
    if (!outcome.empty() || !InProcessOnly()) return outcome;
    return forktest::InProcessExchange();
  }

  rpma_sim_transport initial_ = RPMA_SIM_TRANSPORT_AUTO;
  ibv_context* device_ = nullptr;
  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  uint8_t region_[forktest::kRegionSize] = {};
  rpma_mr_local* region_mr_ = nullptr;
  rpma_conn* client_ = nullptr;
  rpma_conn* server_ = nullptr;
  Traffic traffic_;
};

TEST_P(ForkTest, ChildConnectsToItsParentAndTheParentGoesOn) {
  switch (stage()) {
    case Stage::kConnected:
      ASSERT_NO_FATAL_FAILURE(ConnectToItself());
      break;
    case Stage::kListening:
      ASSERT_NO_FATAL_FAILURE(Listen());
      break;
    case Stage::kPeer:
      ASSERT_NO_FATAL_FAILURE(MakePeer());
      break;
    case Stage::kContext:
      ASSERT_NO_FATAL_FAILURE(GetContext());
      break;
    case Stage::kNothing:
      break;
  }
  int port_pipe[2];
  ASSERT_EQ(0, pipe(port_pipe));
  int outcome_fd = -1;
  const int child = forktest::ForkChild(&outcome_fd, [&] {
    close(port_pipe[1]);
    return Child(port_pipe[0]);
  });
  ASSERT_GT(child, 0);
  close(port_pipe[0]);
  // What the stage had not reached, the parent does now; then the child learns the port.
  ASSERT_NO_FATAL_FAILURE(Listen());
  std::string line = port_ + "\n";
  ASSERT_TRUE(integration::WriteAll(port_pipe[1], line.data(), line.size()));
  close(port_pipe[1]);
  if (!InProcessOnly()) EXPECT_EQ("", forktest::ServeOneClient(ep_, region_mr_));
  EXPECT_EQ("", forktest::ChildOutcome(child, outcome_fd, 2 * kSafetyTimeoutMs));
  if (!InProcessOnly()) {
    std::vector<uint8_t> written(forktest::kSlotSize, 0xc1);
    EXPECT_EQ(0, memcmp(written.data(), region_ + 2 * forktest::kSlotSize, written.size()))
        << "the child's write did not land in its parent's region";
  } else {
    // Nothing of the child's reached this process.
    int fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
    EXPECT_FALSE(integration::WaitReadable(fd, 0));
  }
  if (client_ != nullptr) {
    // The parent's connection went on through the fork, and goes on after the child.
    EXPECT_TRUE(traffic_.WaitForRounds(3)) << traffic_.failure();
    ASSERT_NO_FATAL_FAILURE(CloseOwnConnection());
  }
  EXPECT_EQ(0, rpma_mr_dereg(&region_mr_));
  EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
  EXPECT_EQ(0, rpma_peer_delete(&peer_));
}

INSTANTIATE_TEST_SUITE_P(
    EveryStageAndTransport, ForkTest,
    ::testing::Combine(::testing::Values(RPMA_SIM_TRANSPORT_AUTO, RPMA_SIM_TRANSPORT_INPROC,
                                         RPMA_SIM_TRANSPORT_SHM, RPMA_SIM_TRANSPORT_TCP),
                       ::testing::Values(Stage::kNothing, Stage::kContext, Stage::kPeer,
                                         Stage::kListening, Stage::kConnected)),
    [](const ::testing::TestParamInfo<ForkTest::ParamType>& info) {
      return std::string(TransportName(std::get<0>(info.param))) + "_" +
             StageName(std::get<1>(info.param));
    });

// A fork child numbers its nodes from 1 again: with RPMA_SIM_CRASH_JOURNAL naming no %p it
// records nothing, so its node's journal cannot replace its parent's (PATH.1 for both).
TEST(ForkJournalTest, AChildRecordsNoJournalWithoutPercentP) {
  const char* dir = getenv("TEST_TMPDIR");
  const std::string pattern =
      std::string(dir != nullptr ? dir : "/tmp") + "/fork-journal." + std::to_string(getpid());
  const std::string first = pattern + ".1";
  ASSERT_EQ(0, setenv("RPMA_SIM_CRASH_JOURNAL", pattern.c_str(), 1));
  ibv_context* ibv = nullptr;
  rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv));
  ASSERT_EQ(0, rpma_peer_new(ibv, &peer));  // the parent's node 1, recording
  int outcome_fd = -1;
  const int child = forktest::ForkChild(&outcome_fd, [] {
    // The child's own node 1, and gone: its journal would be written now.
    ibv_context* child_ibv = nullptr;
    rpma_peer* child_peer = nullptr;
    if (rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &child_ibv) != 0 ||
        rpma_peer_new(child_ibv, &child_peer) != 0 || rpma_peer_delete(&child_peer) != 0)
      return forktest::Outcome("the child could not make and delete a peer");
    return forktest::Outcome();
  });
  ASSERT_GT(child, 0);
  EXPECT_EQ("", forktest::ChildOutcome(child, outcome_fd, 2 * kSafetyTimeoutMs));
  EXPECT_NE(0, access(first.c_str(), F_OK)) << "the child wrote " << first << ", its parent's";
  ASSERT_EQ(0, rpma_peer_delete(&peer));
  EXPECT_EQ(0, access(first.c_str(), F_OK)) << "the parent's journal";
  unsetenv("RPMA_SIM_CRASH_JOURNAL");
  unlink(first.c_str());
}

}  // namespace
