// Tests for PtracePermits: which peer process is named under Yama, and when a name is
// given and taken back. The kernel here has no Yama, so the tests replace it
// (SetSystemForTest) with one that records each prctl(PR_SET_PTRACER).
#include "sim/transport/ptrace_permit.h"

#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

// The replaced kernel: its ptrace_scope, the pids named (0: the name taken back), and the
// error the next prctl returns.
std::atomic<int> g_scope{1};
std::atomic<int> g_next_error{0};
std::mutex g_calls_mutex;
std::vector<int> g_calls;

std::atomic<bool> g_maps{true};  // whether the peer maps the segment

int FakeScope() { return g_scope.load(); }
bool FakeMapsSegment(int, const std::string&) { return g_maps.load(); }

int FakeSetPtracer(int pid) {
  std::lock_guard<std::mutex> lock(g_calls_mutex);
  g_calls.push_back(pid);
  return g_next_error.exchange(0);
}

const PtracePermits::System kFake{FakeScope, FakeMapsSegment, FakeSetPtracer};
const std::string kSegment = "rpma-sim-1-0-00000000";

class PtracePermitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_scope = 1;
    g_maps = true;
    g_next_error = 0;
    g_calls.clear();
    PtracePermits::SetSystemForTest(&kFake);
  }
  void TearDown() override { PtracePermits::SetSystemForTest(nullptr); }

  std::vector<int> Calls() {
    std::lock_guard<std::mutex> lock(g_calls_mutex);
    return g_calls;
  }

  PtracePermits permits_;
};

TEST_F(PtracePermitTest, WithoutYamaOrAtScopeZeroNothingIsNamed) {
  g_scope = -1;
  EXPECT_EQ(PermitOutcome::kNotNeeded, permits_.Grant(100, kSegment));
  g_scope = 0;
  EXPECT_EQ(PermitOutcome::kNotNeeded, permits_.Grant(100, kSegment));
  EXPECT_TRUE(Calls().empty());
  EXPECT_EQ(0, permits_.named());
}

TEST_F(PtracePermitTest, AtScopeTwoOrThreeNamingCannotHelp) {
  for (int scope : {2, 3}) {
    g_scope = scope;
    EXPECT_EQ(PermitOutcome::kRefused, permits_.Grant(100, kSegment)) << "scope " << scope;
  }
  EXPECT_TRUE(Calls().empty());
}

TEST_F(PtracePermitTest, TheFirstPeerIsNamedOnceAndKeepsItWhileHeld) {
  EXPECT_EQ(PermitOutcome::kGranted, permits_.Grant(100, kSegment));
  EXPECT_EQ(PermitOutcome::kGranted, permits_.Grant(100, kSegment));  // a second connection to it
  EXPECT_EQ(PermitOutcome::kHeldByAnother, permits_.Grant(200, kSegment));
  EXPECT_EQ(std::vector<int>{100}, Calls());
  EXPECT_EQ(100, permits_.named());

  permits_.Release(100);
  EXPECT_EQ(PermitOutcome::kHeldByAnother, permits_.Grant(200, kSegment));  // still one hold
  permits_.Release(200);                                                    // not named: no effect
  EXPECT_EQ(100, permits_.named());
  permits_.Release(100);  // the last: the name is taken back
  EXPECT_EQ(0, permits_.named());
  EXPECT_EQ(PermitOutcome::kGranted, permits_.Grant(200, kSegment));
  EXPECT_EQ((std::vector<int>{100, 0, 200}), Calls());
}

TEST_F(PtracePermitTest, AFailedPrctlNamesNoOneAndTheNextGrantTriesAgain) {
  g_next_error = EINVAL;
  EXPECT_EQ(PermitOutcome::kRefused, permits_.Grant(100, kSegment));
  EXPECT_EQ(0, permits_.named());
  EXPECT_EQ(PermitOutcome::kGranted, permits_.Grant(200, kSegment));
  EXPECT_EQ((std::vector<int>{100, 200}), Calls());
  permits_.Release(100);  // refused: held nothing
  EXPECT_EQ(200, permits_.named());
}

// On a host with Yama the parent maps no segment of that name: refused, whatever the scope.
TEST_F(PtracePermitTest, OnTheRealKernelThePrctlIsMadeOnlyUnderYama) {
  PtracePermits::SetSystemForTest(nullptr);
  PermitOutcome outcome = permits_.Grant(getppid(), kSegment);
  const int scope = PtracePermits::YamaScope();
  EXPECT_EQ(access("/proc/sys/kernel/yama/ptrace_scope", F_OK) == 0, scope >= 0);
  EXPECT_EQ(scope <= 0 ? PermitOutcome::kNotNeeded : PermitOutcome::kRefused, outcome);
  if (outcome == PermitOutcome::kGranted) permits_.Release(getppid());
  EXPECT_EQ(0, permits_.named());
}

// A pid read from a header the peer writes: one that does not map the segment, no one (0)
// or init (1), is never named.
TEST_F(PtracePermitTest, APidThatIsNotThePeersIsRefused) {
  g_maps = false;
  EXPECT_EQ(PermitOutcome::kRefused, permits_.Grant(100, kSegment));
  g_maps = true;
  EXPECT_EQ(PermitOutcome::kRefused, permits_.Grant(0, kSegment));
  EXPECT_EQ(PermitOutcome::kRefused, permits_.Grant(1, kSegment));
  EXPECT_EQ(PermitOutcome::kRefused, permits_.Grant(-1, kSegment));
  EXPECT_TRUE(Calls().empty());
  EXPECT_EQ(PermitOutcome::kGranted, permits_.Grant(100, kSegment));  // nothing left stuck
}

// No lock is held across the prctl: while one is in progress, the permits still answer.
TEST_F(PtracePermitTest, ThePrctlIsMadeWithoutTheLock) {
  static std::atomic<int> stage{0};  // 1: in the prctl; 2: let it return
  stage = 0;
  static const PtracePermits::System kSlow{FakeScope, FakeMapsSegment, [](int pid) {
                                             stage = 1;
                                             while (stage.load() != 2) std::this_thread::yield();
                                             return FakeSetPtracer(pid);
                                           }};
  PtracePermits::SetSystemForTest(&kSlow);
  std::thread granting([&] { EXPECT_EQ(PermitOutcome::kGranted, permits_.Grant(100, kSegment)); });
  while (stage.load() != 1) std::this_thread::yield();
  EXPECT_EQ(0, permits_.named());  // would wait forever if the prctl held the lock
  stage = 2;
  granting.join();
  EXPECT_EQ(100, permits_.named());
}

TEST_F(PtracePermitTest, ThreadsGrantingOnePeerAtOnceNameItOnce) {
  constexpr int kThreads = 8;
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back(
        [&] { granted += permits_.Grant(100, kSegment) == PermitOutcome::kGranted; });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(kThreads, granted.load());
  threads.clear();
  for (int i = 0; i < kThreads; ++i) threads.emplace_back([&] { permits_.Release(100); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ((std::vector<int>{100, 0}), Calls());
}

// The kernel's name is not inherited: a fork child starts with no one named and names its
// own peer, without taking the parent's name back.
TEST_F(PtracePermitTest, AForkChildStartsWithNoOneNamed) {
  ASSERT_EQ(PermitOutcome::kGranted, PtracePermits::Get().Grant(100, kSegment));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    PtracePermits& own = PtracePermits::Get();
    bool ok = own.named() == 0 && own.Grant(200, kSegment) == PermitOutcome::kGranted &&
              Calls() == std::vector<int>({100, 200});
    own.Release(100);  // the parent's: not the child's to take back
    _exit(ok && own.named() == 200 && Calls().size() == 2 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(100, PtracePermits::Get().named());
  PtracePermits::Get().Release(100);
  EXPECT_EQ(0, PtracePermits::Get().named());
}

}  // namespace
}  // namespace rpma_sim
