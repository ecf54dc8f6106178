// fork_generation.cc -- the fork generation counter and the close-on-fork set, both updated
// by a pthread_atfork child handler.
#include "sim/common/fork_generation.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

namespace rpma_sim {
namespace {

std::atomic<uint32_t> g_generation{0};

// One bit per fd below kMaxCloseOnForkFd (128 KiB, zero pages until a bit is set), and the
// number of words ever written, so that the child scans only those. Lock-free: a child
// handler cannot take a lock that a thread of the parent may have held as it forked.
constexpr int kBitsPerWord = 64;
std::atomic<uint64_t> g_close_on_fork[kMaxCloseOnForkFd / kBitsPerWord];
std::atomic<int> g_words_used{0};

// In the child, as fork() returns: a new generation, and the parent's sockets closed.
// Only async-signal-safe calls (close) and atomics.
void InForkChild() {
  g_generation.fetch_add(1, std::memory_order_acq_rel);
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
const bool g_registered = pthread_atfork(nullptr, nullptr, InForkChild) == 0;

}  // namespace

uint32_t ForkGeneration() { return g_generation.load(std::memory_order_acquire); }

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

bool MarkedCloseOnFork(int fd) {
  if (fd < 0 || fd >= kMaxCloseOnForkFd) return false;
  return (g_close_on_fork[fd / kBitsPerWord].load(std::memory_order_acquire) >>
          (fd % kBitsPerWord)) &
         1;
}

}  // namespace rpma_sim
