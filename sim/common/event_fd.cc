// event_fd.cc -- the count of an EventFd, here or in an eventfd(2) in semaphore mode.
#include "sim/common/event_fd.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

EventFd::Taken ReadOne(int fd) {
  uint64_t value;
  if (read(fd, &value, sizeof(value)) == sizeof(value)) return EventFd::Taken::kYes;
  if (errno == EINTR) return EventFd::Taken::kInterrupted;
  if (errno != EAGAIN) SIM_LOG_ERROR("read(eventfd): %m");
  return EventFd::Taken::kNothing;
}

}  // namespace

EventFd::~EventFd() {
  if (fd_ >= 0) close(fd_);
}

int EventFd::fd() const {
  int fd;
  {
    MutexLock lock(&mutex_);
    if (fd_ >= 0) return fd_;
    // Created with the count so far (eventfd(2) is one system call that cannot block).
    fd = eventfd(static_cast<unsigned int>(pending_), EFD_SEMAPHORE | EFD_CLOEXEC);
    if (fd < 0) {
      SIM_LOG_ERROR("eventfd: %m");
      return -1;
    }
    fd_ = fd;
    pending_ = 0;
    wakes_.fetch_add(1);
  }
  WakeSleepers(INT_MAX);  // they move to the fd
  return fd;
}

void EventFd::Signal() {
  int fd;
  {
    MutexLock lock(&mutex_);
    fd = fd_;
    if (fd < 0) {
      ++pending_;
      wakes_.fetch_add(1);
    }
  }
  if (fd < 0) {
    // After the unlock: a taker woken under the lock would only block on it again.
    WakeSleepers(1);
    return;
  }
  uint64_t one = 1;
  while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

void EventFd::WakeSleepers(int count) const {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&wakes_), FUTEX_WAKE_PRIVATE, count, nullptr,
          nullptr, 0);
}

EventFd::Taken EventFd::Take() {
  const auto start = std::chrono::steady_clock::now();
  const bool spins = fd_.load(std::memory_order_relaxed) < 0;  // the budget learns from these
  const auto give_up = start + std::chrono::nanoseconds(spin_ ? spin_->ns() : kSpinNs);
  while (pending_.load(std::memory_order_relaxed) == 0 && fd_.load(std::memory_order_relaxed) < 0 &&
         std::chrono::steady_clock::now() < give_up)
    sched_yield();
  Taken taken = Taken::kYes;
  for (;;) {
    int fd;
    uint32_t seen;
    {
      MutexLock lock(&mutex_);
      fd = fd_;
      if (fd < 0 && pending_ > 0) {
        --pending_;
        break;
      }
      seen = wakes_.load();
    }
    if (fd >= 0) {
      taken = ReadOne(fd);
      break;
    }
    // Asleep until a Signal or the fd's creation changes the word. A signal whose handler
    // has no SA_RESTART ends the sleep with EINTR, as it ends a read of a real channel's fd.
    if (syscall(SYS_futex, reinterpret_cast<uint32_t*>(&wakes_), FUTEX_WAIT_PRIVATE, seen, nullptr,
                nullptr, 0) != 0 &&
        errno == EINTR) {
      taken = Taken::kInterrupted;
      break;
    }
  }
  if (spin_ && spins && taken == Taken::kYes)
    spin_->Record(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count());
  return taken;
}

void EventFd::Drain() {
  int fd;
  {
    MutexLock lock(&mutex_);
    pending_ = 0;
    fd = fd_;
  }
  if (fd < 0) return;
  pollfd readable{fd, POLLIN, 0};
  uint64_t value;
  while (poll(&readable, 1, 0) == 1 && (readable.revents & POLLIN) != 0) {
    if (read(fd, &value, sizeof(value)) != sizeof(value)) return;
  }
}

}  // namespace rpma_sim
