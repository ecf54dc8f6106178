// test_child.h -- the current test run again in a child process: the test binary executed
// afresh (fork + exec of /proc/self/exe, so the child has its own simulator and none of the
// parent's threads) with --gtest_filter naming this test alone, and a role in the environment.
// The kit's server in a child and its fault-point sweep are both built on it.
#ifndef RPMA_SIM_TESTING_TEST_CHILD_H_
#define RPMA_SIM_TESTING_TEST_CHILD_H_

#include <sys/types.h>

#include <string>

namespace rpma_sim {
namespace testing {

// In a child: the role its parent gave it ("server", "sweep 12", ...) and its end of the
// socket pair to the parent. The environment variable is read once and removed, so the
// child's own children do not inherit it. False in a process that is no kit child.
bool ChildRole(std::string* role, int* fd);

// The parent's handle of one child. The destructor kills (SIGKILL) and reaps a child still
// running.
class TestChild {
 public:
  TestChild() = default;
  ~TestChild();

  TestChild(const TestChild&) = delete;
  TestChild& operator=(const TestChild&) = delete;

  // Starts the current test in a child with `role`. output_fd, if >= 0, becomes the child's
  // stdout and stderr (otherwise it shares the test's). False (errno set) on failure.
  bool Start(const std::string& role, int output_fd);

  // The parent's end of the socket pair.
  int fd() const { return fd_; }

  // Reads one '\n'-terminated line from the child, waiting at most timeout_ms. False on
  // timeout, error or end of file.
  bool ReadLine(int timeout_ms, std::string* line);
  // Writes a line ('\n' added). False on error.
  bool WriteLine(const std::string& line);

  // Waits at most timeout_ms for the child to exit; then kills it. *status is waitpid's;
  // returns false if it had to be killed.
  bool Wait(int timeout_ms, int* status);

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffered_;
};

// The same line protocol, for the child's end.
bool ReadLineFrom(int fd, int timeout_ms, std::string* buffered, std::string* line);
bool WriteLineTo(int fd, const std::string& line);

// Milliseconds on a monotonic clock.
long long NowMs();

}  // namespace testing
}  // namespace rpma_sim

#endif  // RPMA_SIM_TESTING_TEST_CHILD_H_
