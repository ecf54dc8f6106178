// recovery_child.h -- the process in which a crash sweep runs the test's recovery code, one
// crash state after another (SweepCrashStates, crash_sweep.cc).
//
// A child forked from the test's process (it runs only `recover`, on memory: none of the
// simulator): each state's image reaches it through a shared mapping, the verdict comes back
// through a pipe. One child judges state after state, so a state costs no fork; a child that
// crashes or hangs is a verdict, and the next state gets a new child.
#ifndef RPMA_SIM_TESTING_RECOVERY_CHILD_H_
#define RPMA_SIM_TESTING_RECOVERY_CHILD_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <functional>
#include <string>

namespace rpma_sim {
namespace testing {

class RecoveryChild {
 public:
  using Recover = std::function<void(uint8_t* memory, size_t size)>;

  RecoveryChild(Recover recover, size_t size, int timeout_ms);
  ~RecoveryChild();  // ends the child

  RecoveryChild(const RecoveryChild&) = delete;
  RecoveryChild& operator=(const RecoveryChild&) = delete;

  // Runs recover on a copy of `image` (`size` bytes) in the child. True if it ran to its end
  // without a failure; otherwise *failure says what it reported (the first failure and how
  // many there were) or how the child ended (a signal, or the timeout).
  bool Judge(const uint8_t* image, std::string* failure);

 private:
  bool Start();
  // Ends the child (killed if `kill`, else told to exit) and reaps it; returns its status.
  int Stop(bool kill);
  [[noreturn]] void ServeInChild();

  const Recover recover_;
  const size_t size_;
  const int timeout_ms_;
  uint8_t* shared_ = nullptr;  // size_ bytes, shared with the child
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
};

}  // namespace testing
}  // namespace rpma_sim

#endif  // RPMA_SIM_TESTING_RECOVERY_CHILD_H_
