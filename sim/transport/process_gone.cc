// process_gone.cc -- whether another process has ended, through a pidfd (Linux 5.3): it
// reads as ready once the process has ended, also before its parent reaps it.
#include "sim/transport/process_gone.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rpma_sim {

bool ProcessGone(int pid) {
  if (pid <= 0) return false;
#ifdef SYS_pidfd_open
  // Opened for the one question and closed at once: nothing is left for a fork child.
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd >= 0) {
    pollfd ready{fd, POLLIN, 0};
    bool ended = poll(&ready, 1, 0) == 1;
    close(fd);
    return ended;
  }
  if (errno == ESRCH) return true;  // ended and reaped
  if (errno != ENOSYS) return false;
#endif
  // An older kernel: a zombie still reads as running here.
  return kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace rpma_sim
