// peer_process.h -- the other process of a two-process test: its pid, and stopping it.
//
// A side that puts OwnPid() in its private data (the accept's, or the connect's) lets the
// other side find it with PeerPid. Stopped halts a process (SIGSTOP) for its life: what
// still completes meanwhile was executed without that process's threads.
#ifndef RPMA_SIM_TESTS_COMMON_PEER_PROCESS_H_
#define RPMA_SIM_TESTS_COMMON_PEER_PROCESS_H_

#include <librpma.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace rpma_sim {
namespace tests {

// This process's pid as private data (the test's code before Connect runs in a child server
// too, where getpid() is the child's).
inline std::string OwnPid() { return std::to_string(getpid()); }

// The pid the other side put in its private data (OwnPid), or 0.
inline int PeerPid(rpma_conn* conn) {
  rpma_conn_private_data pdata;
  if (rpma_conn_get_private_data(conn, &pdata) != 0 || pdata.len == 0) return 0;
  return atoi(std::string(static_cast<const char*>(pdata.ptr), pdata.len).c_str());
}

// Stops a process for its life; continues it when it ends, whatever happened meanwhile.
class Stopped {
 public:
  explicit Stopped(int pid) : pid_(pid) { stopped_ = kill(pid_, SIGSTOP) == 0 && WaitStopped(); }
  ~Stopped() { kill(pid_, SIGCONT); }
  Stopped(const Stopped&) = delete;
  Stopped& operator=(const Stopped&) = delete;
  bool ok() const { return stopped_; }

 private:
  // Until /proc says the process is stopped ('T'): the signal is asynchronous.
  bool WaitStopped() {
    for (int i = 0; i < 100000; ++i) {
      char path[64], state = 0;
      snprintf(path, sizeof(path), "/proc/%d/stat", pid_);
      FILE* stat = fopen(path, "r");
      if (stat == nullptr) return false;
      int matched = fscanf(stat, "%*d %*s %c", &state);
      fclose(stat);
      if (matched == 1 && state == 'T') return true;
      sched_yield();
    }
    return false;
  }

  int pid_;
  bool stopped_ = false;
};

}  // namespace tests
}  // namespace rpma_sim

#endif  // RPMA_SIM_TESTS_COMMON_PEER_PROCESS_H_
