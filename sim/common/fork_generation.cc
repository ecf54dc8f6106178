// fork_generation.cc -- the fork generation counter and the close-on-fork set, both updated
// by a pthread_atfork child handler.
#include "sim/common/fork_generation.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>

namespace rpma_sim {

std::atomic<uint32_t> fork_generation_internal::generation{0};

namespace {

// One bit per fd below kMaxCloseOnForkFd (128 KiB, zero pages until a bit is set), and the
// number of words ever written, so that the child scans only those. Lock-free: a child
// handler cannot take a lock that a thread of the parent may have held as it forked.
constexpr int kBitsPerWord = 64;
std::atomic<uint64_t> g_close_on_fork[kMaxCloseOnForkFd / kBitsPerWord];
std::atomic<int> g_words_used{0};

// Threads inside a CloseOnForkSection, and forks under way (their prepare handler ran, fork()
// has not returned yet). Sequentially consistent: a thread counts itself in and then looks
// for a fork, a fork counts itself and then looks for threads, so one of them sees the other.
std::atomic<int> g_inside_sections{0};
std::atomic<int> g_forks_under_way{0};

// The prepare handler: no thread is between a socket's creation and its mark (or its unmark
// and its close) when the kernel copies the fds.
void BeforeFork() {
  g_forks_under_way.fetch_add(1);
  while (g_inside_sections.load() != 0) sched_yield();
}

void AfterForkInParent() { g_forks_under_way.fetch_sub(1); }

// In the child, as fork() returns: a new generation, and the parent's sockets closed.
// Only async-signal-safe calls (close) and atomics. The child has one thread, inside no
// section.
void InForkChild() {
  g_forks_under_way.store(0);
  g_inside_sections.store(0);
  fork_generation_internal::generation.fetch_add(1, std::memory_order_acq_rel);
  const int words = g_words_used.load(std::memory_order_acquire);
  for (int word = 0; word < words; ++word) {
    uint64_t bits = g_close_on_fork[word].exchange(0, std::memory_order_acq_rel);
    while (bits != 0) {
      int bit = __builtin_ctzll(bits);
      bits &= bits - 1;
      close(word * kBitsPerWord + bit);
    }
  }
}

// Registered as the library loads, before any thread of the simulator exists.
const bool g_registered = pthread_atfork(BeforeFork, AfterForkInParent, InForkChild) == 0;

}  // namespace

void MarkCloseOnFork(int fd) {
  if (fd < 0 || fd >= kMaxCloseOnForkFd) return;
  const int word = fd / kBitsPerWord;
  int used = g_words_used.load(std::memory_order_relaxed);
  while (used <= word &&
         !g_words_used.compare_exchange_weak(used, word + 1, std::memory_order_acq_rel)) {
  }
  g_close_on_fork[word].fetch_or(uint64_t{1} << (fd % kBitsPerWord), std::memory_order_release);
}

void ForgetCloseOnFork(int fd) {
  if (fd < 0 || fd >= kMaxCloseOnForkFd) return;
  g_close_on_fork[fd / kBitsPerWord].fetch_and(~(uint64_t{1} << (fd % kBitsPerWord)),
                                               std::memory_order_acq_rel);
}

CloseOnForkSection::CloseOnForkSection() {
  for (;;) {
    g_inside_sections.fetch_add(1);
    if (g_forks_under_way.load() == 0) return;
    g_inside_sections.fetch_sub(1);  // a fork is under way: it goes first
    while (g_forks_under_way.load() != 0) sched_yield();
  }
}

CloseOnForkSection::~CloseOnForkSection() { g_inside_sections.fetch_sub(1); }

bool MarkedCloseOnFork(int fd) {
  if (fd < 0 || fd >= kMaxCloseOnForkFd) return false;
  return (g_close_on_fork[fd / kBitsPerWord].load(std::memory_order_acquire) >>
          (fd % kBitsPerWord)) &
         1;
}

}  // namespace rpma_sim
