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

// A Take of `event` on a thread of its own, started by the constructor.
class TakeOnAThread {
 public:
  explicit TakeOnAThread(EventFd* event) : event_(event), result_(taken_.get_future()) {
    waiter_ = std::thread([this, event] {
      tid_ = rpma_sim_test::CurrentTid();
      taken_.set_value(event->Take());
    });
    while (tid_.load() == 0) std::this_thread::yield();
  }
  ~TakeOnAThread() {
    if (!Returned()) event_->Signal();  // a failed test still ends
    waiter_.join();
  }

  // Whether the thread sleeps in system call `syscall_number` (waiting for it a while).
  bool AsleepIn(long syscall_number) {
    return rpma_sim_test::WaitUntilBlockedIn(tid_.load(), syscall_number);
  }
  bool Returned() {
    return !result_.valid() ||  // Result() took it
           result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }
  void Interrupt() { EXPECT_EQ(0, pthread_kill(waiter_.native_handle(), SIGUSR1)); }
  // What the Take returned (kNothing if it did not return within 30 s).
  EventFd::Taken Result() {
    if (result_.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      ADD_FAILURE() << "the Take did not return";
      return EventFd::Taken::kNothing;
    }
    return result_.get();
  }

 private:
  EventFd* const event_;
  std::atomic<pid_t> tid_{0};
  std::promise<EventFd::Taken> taken_;
  std::future<EventFd::Taken> result_;
  std::thread waiter_;
};

// A Take on another thread that must block in `syscall_number` (read(2) on the fd, or the
// futex without one) until `before_signal` has run and the event is signalled; then it
// consumes that one event.
void ExpectBlockedTakeWakesOnSignal(EventFd* event, long syscall_number,
                                    const std::function<void()>& before_signal) {
  {
    TakeOnAThread take(event);
    EXPECT_TRUE(take.AsleepIn(syscall_number))
        << "the waiter never blocked in system call " << syscall_number;
    before_signal();
    EXPECT_FALSE(take.Returned());
    event->Signal();
    EXPECT_EQ(EventFd::Taken::kYes, take.Result());
  }
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
  {
    TakeOnAThread take(event);
    EXPECT_TRUE(take.AsleepIn(syscall_number));
    take.Interrupt();
    EXPECT_EQ(EventFd::Taken::kInterrupted, take.Result());
  }
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
