// event_fd.cc -- eventfd(2) in semaphore mode.
#include "sim/common/event_fd.h"

#include <errno.h>
#include <stdint.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sim/common/log.h"

namespace rpma_sim {

EventFd::EventFd() : fd_(eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC)) {
  if (fd_ < 0) SIM_LOG_ERROR("eventfd: %m");
}

EventFd::~EventFd() {
  if (fd_ >= 0) close(fd_);
}

void EventFd::Signal() {
  uint64_t one = 1;
  while (write(fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
}

bool EventFd::Take() {
  uint64_t value;
  for (;;) {
    if (read(fd_, &value, sizeof(value)) == sizeof(value)) return true;
    if (errno == EINTR) continue;
    if (errno != EAGAIN) SIM_LOG_ERROR("read(eventfd): %m");
    return false;
  }
}

void EventFd::Drain() {
  pollfd readable{fd_, POLLIN, 0};
  uint64_t value;
  while (poll(&readable, 1, 0) == 1 && (readable.revents & POLLIN) != 0) {
    if (read(fd_, &value, sizeof(value)) != sizeof(value)) return;
  }
}

}  // namespace rpma_sim
