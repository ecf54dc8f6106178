// Tests of the wire-thread registry (sim/transport/wire_threads): at process exit every wire
// thread still running is told to stop and joined before the process ends, and a thread
// that does not stop cannot hang the exit. Each case runs in a fresh process (a death test
// in the "threadsafe" style re-executes the binary), whose exit is what is tested.
#include "sim/transport/wire_threads.h"

#include <stdio.h>
#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

// A body that blocks until its stop is called, then says so on stderr.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;

  void Open() {
    fprintf(stderr, "stop called\n");
    std::lock_guard<std::mutex> lock(mutex);
    open = true;
    opened.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex);
    opened.wait(lock, [this] { return open; });
  }
};

class WireThreadsExitTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(WireThreadsExitTest, ExitStopsAndJoinsTheRunningThreads) {
  EXPECT_EXIT(
      {
        static Gate gates[3];
        for (Gate& gate : gates) {
          StartWireThread(
              [&gate] {
                gate.Wait();
                fprintf(stderr, "body returned\n");
              },
              [&gate] { gate.Open(); });
        }
        fprintf(stderr, "threads: %d\n", WireThreadCount());
        exit(0);
      },
      ::testing::ExitedWithCode(0),
      "threads: 3\n(stop called\n)+(.*\n)*body returned\n(.*\n)*body returned\n(.*\n)*"
      "body returned\n");
}

TEST_F(WireThreadsExitTest, AThreadThatDoesNotStopCannotHangTheExit) {
  EXPECT_EXIT(
      {
        // Never destroyed: the thread still waits on it while the process ends.
        static Gate* never = new Gate();
        StartWireThread([] { never->Wait(); }, [] { fprintf(stderr, "asked to stop\n"); });
        exit(0);
      },
      ::testing::ExitedWithCode(0), "asked to stop");
}

}  // namespace
}  // namespace rpma_sim
