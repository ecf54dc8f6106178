// process_gone_test.cc -- ProcessGone, and WaitForZero's end when the process holding the
// count has ended (a peer killed during a direct access never withdraws it).
#include "sim/transport/process_gone.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>

#include "gtest/gtest.h"
#include "sim/transport/direct_area.h"

namespace rpma_sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// A child that stays until killed; reaped by the test.
pid_t StartChild() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;) pause();
  }
  return pid;
}

// Waits until `pid` has ended, without reaping it (it stays a zombie).
void WaitEndedNotReaped(pid_t pid) {
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, pid, &info, WEXITED | WNOWAIT), 0);
}

TEST(ProcessGoneTest, RunningAndStoppedProcessesAreNotGone) {
  EXPECT_FALSE(ProcessGone(getpid()));
  EXPECT_FALSE(ProcessGone(0));
  pid_t child = StartChild();
  ASSERT_GT(child, 0);
  EXPECT_FALSE(ProcessGone(child));
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, child, &info, WSTOPPED), 0);
  EXPECT_FALSE(ProcessGone(child));  // stopped, as under a debugger: it may go on
  ASSERT_EQ(kill(child, SIGKILL), 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
}

TEST(ProcessGoneTest, AKilledProcessIsGoneBeforeAndAfterItIsReaped) {
  pid_t child = StartChild();
  ASSERT_GT(child, 0);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  WaitEndedNotReaped(child);
  EXPECT_TRUE(ProcessGone(child));  // a zombie
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_TRUE(ProcessGone(child));  // reaped (its pid is not reused this soon)
}

TEST(WaitForZeroTest, EndsAtZeroOrAtItsBoundWhileTheHolderRuns) {
  std::atomic<uint32_t> count{0};
  EXPECT_TRUE(WaitForZero(count, milliseconds(10), getpid()));
  count = 1;
  EXPECT_FALSE(WaitForZero(count, milliseconds(20), getpid()));
  EXPECT_FALSE(WaitForZero(count, milliseconds(20), 0));  // no holder known
}

TEST(WaitForZeroTest, AnAccessOfAProcessThatEndedIsOver) {
  std::atomic<uint32_t> count{1};  // announced by the child, never withdrawn
  pid_t child = StartChild();
  ASSERT_GT(child, 0);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  WaitEndedNotReaped(child);
  // The bound is far off: the wait ends because the holder is gone, not at the bound.
  const auto start = steady_clock::now();
  EXPECT_TRUE(WaitForZero(count, milliseconds(60000), child));
  EXPECT_LT(steady_clock::now() - start, milliseconds(30000));
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
}

}  // namespace
}  // namespace rpma_sim
