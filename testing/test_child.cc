// test_child.cc -- running the current test again in a child process, and talking to it.
#include "testing/test_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <vector>

namespace rpma_sim {
namespace testing {
namespace {

constexpr char kRoleVariable[] = "RPMA_SIM_TESTING_CHILD";

// "Suite.Name" of the running test, as --gtest_filter wants it.
std::string CurrentTestFilter() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "*";
  return std::string(info->test_suite_name()) + "." + info->name();
}

// In the child, between fork and exec: what must not reach the test binary run again.
void PrepareChildEnvironment(const std::string& role, int fd) {
  // The child runs one test: no sharding, no XML report over the parent's, no premature-exit
  // file of the parent's removed.
  for (const char* name : {"GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX", "TEST_TOTAL_SHARDS",
                           "TEST_SHARD_INDEX", "GTEST_OUTPUT", "XML_OUTPUT_FILE",
                           "TEST_PREMATURE_EXIT_FILE", "TEST_SHARD_STATUS_FILE", "GTEST_FILTER"})
    unsetenv(name);
  setenv(kRoleVariable, (role + " " + std::to_string(fd)).c_str(), 1);
}

}  // namespace

long long NowMs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000LL + now.tv_nsec / 1000000;
}

bool ChildRole(std::string* role, int* fd) {
  static const std::string* given = [] {
    const char* value = getenv(kRoleVariable);
    std::string* text = value != nullptr ? new std::string(value) : nullptr;
    unsetenv(kRoleVariable);
    return text;
  }();
  if (given == nullptr) return false;
  size_t space = given->rfind(' ');
  if (space == std::string::npos) return false;
  *role = given->substr(0, space);
  *fd = atoi(given->c_str() + space + 1);
  fcntl(*fd, F_SETFD, FD_CLOEXEC);  // not inherited by this child's own children
  return true;
}

TestChild::~TestChild() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

bool TestChild::Start(const std::string& role, int output_fd) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return false;
  const std::string filter = "--gtest_filter=" + CurrentTestFilter();
  pid_ = fork();
  if (pid_ < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid_ == 0) {
    fcntl(fds[1], F_SETFD, 0);  // the child's end survives the exec
    PrepareChildEnvironment(role, fds[1]);
    if (output_fd >= 0) {
      dup2(output_fd, STDOUT_FILENO);
      dup2(output_fd, STDERR_FILENO);
    }
    std::vector<char*> argv = {const_cast<char*>("rpma-sim-testing-child"),
                               const_cast<char*>(filter.c_str()), nullptr};
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(fds[1]);
  fd_ = fds[0];
  return true;
}

bool TestChild::ReadLine(int timeout_ms, std::string* line) {
  return ReadLineFrom(fd_, timeout_ms, &buffered_, line);
}

bool TestChild::WriteLine(const std::string& line) { return WriteLineTo(fd_, line); }

bool TestChild::Wait(int timeout_ms, int* status) {
  const long long deadline = NowMs() + timeout_ms;
  for (;;) {
    pid_t ended = waitpid(pid_, status, WNOHANG);
    if (ended == pid_) break;
    if (ended < 0 && errno != EINTR) return false;
    long long left = deadline - NowMs();
    if (left <= 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, status, 0);
      pid_ = -1;
      return false;
    }
    // The child's end of the socket closes as it exits: wait for that, not a fixed time.
    pollfd pfd = {fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left)) <= 0) continue;
    char chunk[256];
    ssize_t n = read(fd_, chunk, sizeof(chunk));
    if (n > 0) {
      buffered_.append(chunk, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      waitpid(pid_, status, 0);  // the socket is closed: the child is ending
      break;
    }
  }
  pid_ = -1;
  return true;
}

bool ReadLineFrom(int fd, int timeout_ms, std::string* buffered, std::string* line) {
  const long long deadline = NowMs() + timeout_ms;
  for (;;) {
    size_t newline = buffered->find('\n');
    if (newline != std::string::npos) {
      *line = buffered->substr(0, newline);
      buffered->erase(0, newline + 1);
      return true;
    }
    long long left = deadline - NowMs();
    pollfd pfd = {fd, POLLIN, 0};
    int ready = left > 0 ? poll(&pfd, 1, static_cast<int>(left)) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char chunk[256];
    ssize_t n = read(fd, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffered->append(chunk, static_cast<size_t>(n));
  }
}

bool WriteLineTo(int fd, const std::string& line) {
  std::string text = line + "\n";
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace testing
}  // namespace rpma_sim
