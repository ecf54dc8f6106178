// sim_test_support.h -- helpers shared by the sim unit tests: fd readiness and flags, and
// knowing without sleeping that another thread is blocked in a given system call.
#ifndef RPMA_SIM_TESTS_SIM_SIM_TEST_SUPPORT_H_
#define RPMA_SIM_TESTS_SIM_SIM_TEST_SUPPORT_H_

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace rpma_sim_test {

// True if `fd` is readable now (poll with a zero timeout).
inline bool IsReadable(int fd) {
  pollfd pfd{fd, POLLIN, 0};
  return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0;
}

// Sets O_NONBLOCK on `fd`, as a user would with fcntl; true on success.
inline bool SetNonBlocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// The calling thread's kernel thread id.
inline pid_t CurrentTid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// True once thread `tid` of this process sleeps inside system call `syscall_number`;
// false if that has not happened within `timeout` (a safety net, not a wait).
inline bool WaitUntilBlockedIn(pid_t tid, long syscall_number,
                               std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const std::string task = "/proc/self/task/" + std::to_string(tid);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream stat_file(task + "/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    const char state = paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
    std::ifstream syscall_file(task + "/syscall");
    long number = -1;
    if (syscall_file >> number && number == syscall_number && (state == 'S' || state == 'D'))
      return true;
    std::this_thread::yield();
  }
  return false;
}

}  // namespace rpma_sim_test

#endif  // RPMA_SIM_TESTS_SIM_SIM_TEST_SUPPORT_H_
