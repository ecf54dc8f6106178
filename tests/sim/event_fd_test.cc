// Tests of EventFd (sim/common/event_fd): counting, non-blocking Take, poll readiness, wake-up.
#include "sim/common/event_fd.h"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

using rpma_sim_test::IsReadable;
using rpma_sim_test::SetNonBlocking;

TEST(EventFdTest, FdIsValid) {
  EventFd event;
  EXPECT_GE(event.fd(), 0);
}

TEST(EventFdTest, NonBlockingTakeWithNothingPendingReturnsFalse) {
  EventFd event;
  ASSERT_TRUE(SetNonBlocking(event.fd()));
  EXPECT_EQ(EventFd::Taken::kNothing, event.Take());
  EXPECT_EQ(EventFd::Taken::kNothing, event.Take());
}

TEST(EventFdTest, EachSignalAllowsExactlyOneTake) {
  EventFd event;
  ASSERT_TRUE(SetNonBlocking(event.fd()));
  event.Signal();
  event.Signal();
  event.Signal();
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(EventFd::Taken::kNothing, event.Take());
}

TEST(EventFdTest, SignalAfterDrainingCountsAgain) {
  EventFd event;
  ASSERT_TRUE(SetNonBlocking(event.fd()));
  event.Signal();
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(EventFd::Taken::kNothing, event.Take());
  event.Signal();
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(EventFd::Taken::kNothing, event.Take());
}

TEST(EventFdTest, BlockingTakeReturnsAtOnceWhenSomethingIsPending) {
  EventFd event;
  event.Signal();
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());  // the fd is blocking; this must not wait
}

TEST(EventFdTest, ReadableExactlyWhilePending) {
  EventFd event;
  ASSERT_TRUE(SetNonBlocking(event.fd()));
  EXPECT_FALSE(IsReadable(event.fd()));
  event.Signal();
  EXPECT_TRUE(IsReadable(event.fd()));
  event.Signal();
  EXPECT_TRUE(IsReadable(event.fd()));
  ASSERT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_TRUE(IsReadable(event.fd()));  // level-triggered: one still pending
  ASSERT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_FALSE(IsReadable(event.fd()));
}

// A Take on another thread that must block in `syscall_number` (read(2) on the fd, or the
// futex of the condition variable without one) until `before_signal` has run and the event
// is signalled; then it consumes that one event.
void ExpectBlockedTakeWakesOnSignal(EventFd* event, long syscall_number,
                                    const std::function<void()>& before_signal) {
  std::atomic<pid_t> tid{0};
  std::promise<EventFd::Taken> taken;
  std::future<EventFd::Taken> result = taken.get_future();
  std::thread waiter([&] {
    tid = rpma_sim_test::CurrentTid();
    taken.set_value(event->Take());
  });
  while (tid.load() == 0) std::this_thread::yield();
  ASSERT_TRUE(rpma_sim_test::WaitUntilBlockedIn(tid.load(), syscall_number))
      << "the waiter never blocked in system call " << syscall_number;
  before_signal();
  EXPECT_NE(std::future_status::ready, result.wait_for(std::chrono::seconds(0)));
  event->Signal();
  ASSERT_EQ(std::future_status::ready, result.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(EventFd::Taken::kYes, result.get());
  waiter.join();
  ASSERT_TRUE(SetNonBlocking(event->fd()));
  EXPECT_EQ(EventFd::Taken::kNothing, event->Take());  // the one signal was consumed by the waiter
}

TEST(EventFdTest, BlockedTakeInAnotherThreadWakesOnSignal) {
  EventFd event;
  ASSERT_GE(event.fd(), 0);  // the wait goes through the kernel fd
  ExpectBlockedTakeWakesOnSignal(&event, SYS_read, [] {});
}

// How many fds this process has open.
int OpenFds() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (readdir(dir) != nullptr) ++count;
  closedir(dir);
  return count;
}

TEST(EventFdTest, NoKernelFdUntilAskedForOne) {
  int before = OpenFds();
  EventFd event;
  event.Signal();
  ASSERT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(before, OpenFds()) << "an fd was created though nobody asked for one";
  int fd = event.fd();
  ASSERT_GE(fd, 0);
  EXPECT_EQ(before + 1, OpenFds());
  EXPECT_EQ(fd, event.fd()) << "the fd must stay the same";
  EXPECT_EQ(before + 1, OpenFds());
}

TEST(EventFdTest, EventsPendingBeforeTheFdAreInIt) {
  EventFd event;
  event.Signal();
  event.Signal();
  ASSERT_TRUE(SetNonBlocking(event.fd()));
  EXPECT_TRUE(IsReadable(event.fd()));
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(EventFd::Taken::kYes, event.Take());
  EXPECT_EQ(EventFd::Taken::kNothing, event.Take());
  EXPECT_FALSE(IsReadable(event.fd()));
}

TEST(EventFdTest, DrainWithoutAnFdForgetsThePending) {
  EventFd event;
  event.Signal();
  event.Drain();
  ASSERT_TRUE(SetNonBlocking(event.fd()));
  EXPECT_EQ(EventFd::Taken::kNothing, event.Take());
}

// A Take blocked before anyone asked for the fd waits without one, and still wakes when the
// fd is created meanwhile and the event is signalled through it.
TEST(EventFdTest, TakeBlockedWithoutAnFdWakesAfterTheFdIsCreated) {
  EventFd event;
  ExpectBlockedTakeWakesOnSignal(&event, SYS_futex, [&event] { ASSERT_GE(event.fd(), 0); });
}

void NoteSignal(int) {}

// Takes from `event` on a thread of its own until it sleeps in `syscall_number`, then sends
// that thread a signal whose handler has no SA_RESTART: the Take says so and consumes
// nothing, as read(2) on a real channel's fd fails with EINTR.
void ExpectTakeInterruptedIn(EventFd* event, long syscall_number) {
  struct sigaction action {};
  action.sa_handler = NoteSignal;
  sigemptyset(&action.sa_mask);
  struct sigaction old {};
  ASSERT_EQ(0, sigaction(SIGUSR1, &action, &old));
  std::atomic<pid_t> tid{0};
  std::promise<EventFd::Taken> taken;
  std::future<EventFd::Taken> result = taken.get_future();
  std::thread waiter([&] {
    tid = rpma_sim_test::CurrentTid();
    taken.set_value(event->Take());
  });
  while (tid.load() == 0) std::this_thread::yield();
  EXPECT_TRUE(rpma_sim_test::WaitUntilBlockedIn(tid.load(), syscall_number));
  EXPECT_EQ(0, pthread_kill(waiter.native_handle(), SIGUSR1));
  EXPECT_EQ(std::future_status::ready, result.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(EventFd::Taken::kInterrupted, result.get());
  waiter.join();
  sigaction(SIGUSR1, &old, nullptr);
  event->Signal();  // still counts: the interrupted Take took nothing
  ASSERT_TRUE(SetNonBlocking(event->fd()));
  EXPECT_EQ(EventFd::Taken::kYes, event->Take());
  EXPECT_EQ(EventFd::Taken::kNothing, event->Take());
}

TEST(EventFdTest, ASignalInterruptsASleepingTakeWithOrWithoutTheFd) {
  EventFd without_fd;
  ExpectTakeInterruptedIn(&without_fd, SYS_futex);
  EventFd with_fd;
  ASSERT_GE(with_fd.fd(), 0);
  ExpectTakeInterruptedIn(&with_fd, SYS_read);
}

}  // namespace
}  // namespace rpma_sim
