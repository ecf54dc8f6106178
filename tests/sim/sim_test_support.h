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
#include <initializer_list>
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
inline bool WaitUntilBlockedIn(pid_t tid, std::initializer_list<long> syscall_numbers,
                               std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const std::string task = "/proc/self/task/" + std::to_string(tid);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream stat_file(task + "/stat");
    std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
    const size_t paren = stat.rfind(')');
    const char state =
        paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
    std::ifstream syscall_file(task + "/syscall");
    long number = -1;
    bool in_one = false;
    if (syscall_file >> number)
      for (long syscall_number : syscall_numbers) in_one = in_one || number == syscall_number;
    if (in_one && (state == 'S' || state == 'D')) return true;
    std::this_thread::yield();
  }
  return false;
}

inline bool WaitUntilBlockedIn(pid_t tid, long syscall_number,
                               std::chrono::seconds timeout = std::chrono::seconds(30)) {
  return WaitUntilBlockedIn(tid, {syscall_number}, timeout);
}

// True once the progress engine's thread `tid` sleeps with nothing to do: in epoll_wait
// when the process has sockets, on its own condition variable (a futex) when it has none.
inline bool WaitUntilEngineSleeps(pid_t tid) {
  return WaitUntilBlockedIn(tid, {SYS_epoll_wait, SYS_epoll_pwait, SYS_futex});
}

}  // namespace rpma_sim_test

#endif  // RPMA_SIM_TESTS_SIM_SIM_TEST_SUPPORT_H_
