// recovery_child.cc -- a forked process that runs recovery code on crash-state images.
//
// The parent writes an image into the shared mapping and one byte into the child's pipe;
// the child runs recover on it and answers with a verdict: u8 (1 recovered, 0 not), u32
// length, then that many bytes of the failure's text.
#include "testing/recovery_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace rpma_sim {
namespace testing {
namespace {

// To a pipe whose reader may have died: false (EPIPE), not a SIGPIPE that would end the
// test's process. The signal is blocked for the write, and the one it raised taken.
bool WriteAll(int fd, const void* data, size_t size) {
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  const char* at = static_cast<const char*>(data);
  bool written = true;
  while (size > 0) {
    ssize_t n = write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      written = false;
      break;
    }
    at += n;
    size -= static_cast<size_t>(n);
  }
  if (!written && errno == EPIPE) {
    const timespec now{0, 0};
    sigtimedwait(&pipe_signal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return written;
}

// Reads `size` bytes, waiting until `deadline_ms` (CLOCK_MONOTONIC) at the latest. -1 on
// timeout, 0 at end of file or on error, 1 on success.
int ReadAll(int fd, void* data, size_t size, int64_t deadline_ms) {
  char* at = static_cast<char*>(data);
  while (size > 0) {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const int64_t left = deadline_ms - (now.tv_sec * 1000 + now.tv_nsec / 1000000);
    if (left <= 0) return -1;
    pollfd readable{fd, POLLIN, 0};
    int ready = poll(&readable, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return -1;
    ssize_t n = read(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;
    at += n;
    size -= static_cast<size_t>(n);
  }
  return 1;
}

int64_t NowMs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

}  // namespace

RecoveryChild::RecoveryChild(Recover recover, size_t size, int timeout_ms)
    : recover_(std::move(recover)), size_(size), timeout_ms_(timeout_ms) {
  void* shared = mmap(nullptr, size_ == 0 ? 1 : size_, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared != MAP_FAILED) shared_ = static_cast<uint8_t*>(shared);
}

RecoveryChild::~RecoveryChild() {
  if (pid_ > 0) Stop(false);
  if (shared_ != nullptr) munmap(shared_, size_ == 0 ? 1 : size_);
}

bool RecoveryChild::Start() {
  int to[2], from[2];
  if (shared_ == nullptr || pipe2(to, O_CLOEXEC) != 0) return false;
  if (pipe2(from, O_CLOEXEC) != 0) {
    close(to[0]);
    close(to[1]);
    return false;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    close(to[1]);
    close(from[0]);
    to_child_ = to[0];
    from_child_ = from[1];
    ServeInChild();
  }
  close(to[0]);
  close(from[1]);
  if (pid < 0) {
    close(to[1]);
    close(from[0]);
    return false;
  }
  pid_ = pid;
  to_child_ = to[1];
  from_child_ = from[0];
  return true;
}

void RecoveryChild::ServeInChild() {
  for (;;) {
    char go;
    ssize_t n = read(to_child_, &go, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) _exit(0);  // the parent is done
    // The failures of recover's thread are taken here, not by the test's reporter (they
    // belong to this state, not to the test as a whole).
    ::testing::TestPartResultArray results;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      recover_(shared_, size_);
    }
    std::string failure;
    int failed = 0;
    for (int i = 0; i < results.size(); ++i) {
      const ::testing::TestPartResult& result = results.GetTestPartResult(i);
      if (!result.failed()) continue;
      if (failed++ == 0)
        failure = std::string(result.file_name() != nullptr ? result.file_name() : "?") + ":" +
                  std::to_string(result.line_number()) + ": " + result.message();
    }
    if (failed > 1) failure += " (and " + std::to_string(failed - 1) + " more failures)";
    uint8_t recovered = failed == 0 ? 1 : 0;
    uint32_t length = static_cast<uint32_t>(failure.size());
    fflush(stdout);
    if (!WriteAll(from_child_, &recovered, 1) || !WriteAll(from_child_, &length, 4) ||
        !WriteAll(from_child_, failure.data(), failure.size()))
      _exit(0);
  }
}

int RecoveryChild::Stop(bool kill_it) {
  if (kill_it) kill(pid_, SIGKILL);
  close(to_child_);  // a child that still reads exits at the end of its pipe
  close(from_child_);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  to_child_ = from_child_ = -1;
  return status;
}

bool RecoveryChild::Judge(const uint8_t* image, std::string* failure) {
  if (pid_ < 0 && !Start()) {
    *failure = std::string("cannot start the recovery process: ") + strerror(errno);
    return false;
  }
  memcpy(shared_, image, size_);
  const char go = 'G';
  const int64_t deadline = NowMs() + timeout_ms_;
  uint8_t recovered = 0;
  uint32_t length = 0;
  int got = WriteAll(to_child_, &go, 1) ? ReadAll(from_child_, &recovered, 1, deadline) : 0;
  if (got == 1) got = ReadAll(from_child_, &length, 4, deadline);
  if (got == 1) {
    failure->assign(length, '\0');
    got = ReadAll(from_child_, &(*failure)[0], length, deadline);
  }
  if (got == 1) return recovered == 1;
  const int status = Stop(got < 0);
  if (got < 0)
    *failure = "recovery hung (more than " + std::to_string(timeout_ms_) + " ms): killed";
  else if (WIFSIGNALED(status))
    *failure = std::string("recovery crashed: ") + strsignal(WTERMSIG(status));
  else
    *failure = "recovery exited with status " + std::to_string(WEXITSTATUS(status));
  return false;
}

}  // namespace testing
}  // namespace rpma_sim
