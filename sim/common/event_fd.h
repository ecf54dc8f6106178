// event_fd.h -- a counting, pollable kernel fd that every user-visible wait goes through.
//
// An eventfd in semaphore mode: Signal() adds one pending event and makes the fd readable;
// Take() consumes one, blocking unless the user set O_NONBLOCK on the fd (fcntl), in which
// case it reports "nothing pending" at once. Level-triggered, so it works with poll and epoll.
#ifndef RPMA_SIM_COMMON_EVENT_FD_H_
#define RPMA_SIM_COMMON_EVENT_FD_H_

namespace rpma_sim {

class EventFd {
 public:
  EventFd();
  ~EventFd();

  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;

  // -1 if the kernel refused to create the fd.
  int fd() const { return fd_; }

  // Adds one pending event.
  void Signal();

  // Consumes one pending event. Returns false without waiting when the fd is non-blocking
  // and nothing is pending (or on an unexpected error).
  bool Take();

  // Consumes every pending event without waiting, whatever the fd's flags.
  void Drain();

 private:
  int fd_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_EVENT_FD_H_
