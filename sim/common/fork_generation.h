// fork_generation.h -- which process of a line of fork() children this is, and the fds a
// child must not keep.
//
// A child made by fork() has one thread (the one that forked) and a copy of everything else:
// the progress engine's tables, locks another thread held, the parent's sockets. The
// simulator gives such a child a fresh simulator of its own on its first use
// (per_process.h) and never touches what it inherited. Every process-wide object is
// therefore keyed by the fork generation: 0 in the process that loaded the simulator, one
// more in each child, as fork() returns there.
//
// A socket the simulator owns (a listener's, a connection's) is marked close-on-fork: the
// child closes its copy as fork() returns, so the parent's port and connections end when
// the parent ends them, not when its last child exits. Fds handed to the application
// (event and completion fds) are not: they are the application's to close.
#ifndef RPMA_SIM_COMMON_FORK_GENERATION_H_
#define RPMA_SIM_COMMON_FORK_GENERATION_H_

#include <stdint.h>

#include <atomic>

namespace rpma_sim {

namespace fork_generation_internal {
extern std::atomic<uint32_t> generation;  // one more in each child, as fork() returns
}  // namespace fork_generation_internal

// This process's fork generation. One atomic load (inline: every API call reads it).
inline uint32_t ForkGeneration() {
  return fork_generation_internal::generation.load(std::memory_order_acquire);
}

// Marks `fd` (a socket of the simulator) to be closed in a child as fork() returns there;
// ForgetCloseOnFork before the fd is closed, so that a child never closes a number that
// was reused meanwhile. Fds from kMaxCloseOnForkFd up are not marked (a child keeps them).
constexpr int kMaxCloseOnForkFd = 1 << 20;  // Linux's default limit on a process's fds
void MarkCloseOnFork(int fd);
void ForgetCloseOnFork(int fd);

// Whether `fd` is marked (for tests).
bool MarkedCloseOnFork(int fd);

// A socket of the simulator is made and marked, and unmarked and closed, inside a
// CloseOnForkSection. The kernel copies a forking process's fds while its other threads run
// on, so without it a fork between a socket's creation and its mark (or its unmark and
// close) would leave the child a copy it never closes. fork() waits (its prepare handler)
// until no thread is inside one, and a thread that would enter one waits for the fork. Hold
// one only across the calls that make or close the fd and the mark: nothing in it waits or
// takes a lock.
class CloseOnForkSection {
 public:
  CloseOnForkSection();
  ~CloseOnForkSection();
  CloseOnForkSection(const CloseOnForkSection&) = delete;
  CloseOnForkSection& operator=(const CloseOnForkSection&) = delete;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_FORK_GENERATION_H_
