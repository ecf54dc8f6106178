// child_process.h -- the other side of a two-process integration test: the test binary
// re-executed (fork + exec of /proc/self/exe, so the child starts with a fresh librpma and no
// threads inherited from the test) with a role and arguments. A pipe carries the child's
// lines ("PORT 1234", "ESTABLISHED", ...) to the test; nothing waits by sleeping.
#ifndef RPMA_SIM_TESTS_INTEGRATION_CHILD_PROCESS_H_
#define RPMA_SIM_TESTS_INTEGRATION_CHILD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace integration {

// The child runs `/proc/self/exe ROLE PIPE_FD ARGS...`; its stdout and stderr are the test's.
// Killed (SIGKILL) and reaped by the destructor if the test has not done so.
class Child {
 public:
  Child(const char* role, const std::vector<std::string>& args);
  ~Child();

  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // The child's next line on the pipe, with the safety timeout; asserted to be `expected`
  // (or, with prefix = true, to start with it; the line is returned).
  // Use with ASSERT_NO_FATAL_FAILURE.
  void ExpectLine(const std::string& expected, std::string* line, bool prefix = false);

  // SIGKILL, reap, and expect that the child was still alive to be killed.
  void KillAndReap();

  // Reaps the child, waiting for it to end (the safety timeout: then it is killed), and
  // returns its waitpid status in *status. Use with ASSERT_NO_FATAL_FAILURE.
  void Reap(int* status);

  bool started() const { return pid_ > 0 && pipe_ >= 0; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int pipe_ = -1;
};

}  // namespace integration

#endif  // RPMA_SIM_TESTS_INTEGRATION_CHILD_PROCESS_H_
