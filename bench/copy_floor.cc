// copy_floor.cc -- what this machine charges for moving bytes into another process: a bare
// system call, process_vm_writev (what rpma-sim's direct access to a heap region costs per
// operation, and per range of a batch of them) and memcpy into shared memory (what it costs
// for a region that maps a file), at the sizes compare_ucx.sh measures, and the uncontended
// synchronization every work request's path pays (an atomic, a lock, a shared reference).
// Prints a Markdown table.
//
//   bazel run -c opt //bench:copy_floor
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

namespace {

constexpr size_t kMax = 1 << 20;

// Microseconds per call of `operation`, over `count` calls.
template <typename Operation>
double Time(int count, Operation operation) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) operation();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() /
         count;
}

}  // namespace

int main() {
  // The target: a child process that waits on a pipe, with a heap buffer of its own (the
  // same address here, after fork) and a shared mapping both see.
  static char target[kMax];
  char* shared = static_cast<char*>(
      mmap(nullptr, kMax, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  int pipe_fds[2];
  if (shared == MAP_FAILED || pipe(pipe_fds) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    char byte;
    ssize_t got = read(pipe_fds[0], &byte, 1);
    _exit(got == 1 ? 0 : 1);
  }
  std::vector<char> source(kMax, 'x');
  printf("| operation | size | us per call | GB/s |\n|---|---|---|---|\n");
  printf("| getppid (a bare system call) | - | %.3f | - |\n",
         Time(200000, [] { syscall(SYS_getppid); }));
  for (size_t size : {size_t{64}, size_t{4096}, size_t{65536}, kMax}) {
    int count = size >= 65536 ? 5000 : 100000;
    bool failed = false;
    double vm_us = Time(count, [&] {
      iovec local{source.data(), size}, remote{target, size};
      failed |= process_vm_writev(child, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(size);
    });
    double copy_us = Time(count, [&] {
      memcpy(shared, source.data(), size);
      asm volatile("" ::: "memory");
    });
    if (failed) printf("| process_vm_writev failed (ptrace rules?) | | | |\n");
    printf("| process_vm_writev into another process | %zu B | %.3f | %.2f |\n", size, vm_us,
           size / vm_us / 1e3);
    printf("| memcpy into shared memory | %zu B | %.3f | %.2f |\n", size, copy_us,
           size / copy_us / 1e3);
  }
  // What a batch of deferred 64 B copies costs (ProcessVmBatch): 64 ranges in one call.
  {
    constexpr int kRanges = 64;
    iovec local[kRanges], remote[kRanges];
    for (int i = 0; i < kRanges; ++i) {
      local[i] = iovec{source.data() + 64 * i, 64};
      remote[i] = iovec{target, 64};  // the same 64 B, as a stream of writes to one region
    }
    bool failed = false;
    double vm_us = Time(20000, [&] {
      failed |= process_vm_writev(child, local, kRanges, remote, kRanges, 0) != 64 * kRanges;
    });
    if (failed) printf("| process_vm_writev failed (ptrace rules?) | | | |\n");
    printf("| process_vm_writev, %d ranges of 64 B in one call | %d B | %.3f | %.2f |\n", kRanges,
           64 * kRanges, vm_us, 64 * kRanges / vm_us / 1e3);
    printf("| the same, per 64 B range | 64 B | %.3f | - |\n", vm_us / kRanges);
  }
  // The building blocks of a work request's path that are not copies, uncontended (one
  // thread): what a post, its execution and its completion pay per lock and reference.
  {
    std::atomic<long> counter{0};
    printf("| an atomic read-modify-write (fetch_add) | - | %.4f | - |\n",
           Time(10000000, [&] { counter.fetch_add(1, std::memory_order_relaxed); }));
    std::mutex mutex;
    printf("| a mutex taken and given back | - | %.4f | - |\n", Time(10000000, [&] {
             mutex.lock();
             mutex.unlock();
           }));
    auto shared_value = std::make_shared<long>(0);
    printf("| a shared_ptr copied and dropped | - | %.4f | - |\n", Time(10000000, [&] {
             std::shared_ptr<long> copy = shared_value;
             asm volatile("" : : "r"(copy.get()) : "memory");
           }));
  }
  if (write(pipe_fds[1], "x", 1) != 1) return 1;
  waitpid(child, nullptr, 0);
  return 0;
}
