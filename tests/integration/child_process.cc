// child_process.cc -- starting, talking to and reaping a test's child process.
#include "tests/integration/child_process.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/integration_support.h"

namespace integration {

Child::Child(const char* role, const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) {
    ADD_FAILURE() << "pipe: " << strerror(errno);
    return;
  }
  pid_ = fork();
  if (pid_ < 0) {
    ADD_FAILURE() << "fork: " << strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid_ == 0) {
    close(fds[0]);
    std::string fd = std::to_string(fds[1]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>("child"));
    argv.push_back(const_cast<char*>(role));
    argv.push_back(const_cast<char*>(fd.c_str()));
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(fds[1]);
  pipe_ = fds[0];
}

Child::~Child() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (pipe_ >= 0) close(pipe_);
}

void Child::ExpectLine(const std::string& expected, std::string* line, bool prefix) {
  std::string got;
  ASSERT_TRUE(ReadLine(pipe_, kSafetyTimeoutMs, &got))
      << "the child did not say \"" << expected << "\" within " << kSafetyTimeoutMs << " ms (got \""
      << got << "\")";
  if (prefix)
    ASSERT_EQ(0u, got.rfind(expected, 0)) << "the child said \"" << got << "\"";
  else
    ASSERT_EQ(expected, got);
  if (line) *line = got;
}

void Child::KillAndReap() {
  ASSERT_GT(pid_, 0);
  ASSERT_EQ(0, kill(pid_, SIGKILL));
  int status = 0;
  ASSERT_EQ(pid_, waitpid(pid_, &status, 0));
  pid_ = -1;
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the child ended before the kill (status " << status << ")";
}

void Child::Reap(int* status) {
  ASSERT_GT(pid_, 0);
  // The pipe's end says the child is gone (its write end closes as it exits); a child still
  // silent after the safety timeout is killed.
  long long deadline = NowMs() + kSafetyTimeoutMs;
  std::string rest;
  while (NowMs() < deadline && ReadLine(pipe_, static_cast<int>(deadline - NowMs()), &rest)) {
  }
  if (NowMs() >= deadline) {
    ADD_FAILURE() << "the child did not end within " << kSafetyTimeoutMs << " ms";
    kill(pid_, SIGKILL);
  }
  ASSERT_EQ(pid_, waitpid(pid_, status, 0));
  pid_ = -1;
}

}  // namespace integration
