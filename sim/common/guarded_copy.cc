// guarded_copy.cc -- the copying thread's record of its copy, the fault handler that ends
// a copy that faulted, and the second try through /proc/self/mem.
#include "sim/common/guarded_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "sim/common/signal_chain.h"

namespace rpma_sim {
namespace {

// The copy this thread is making, if `armed`. (A plain thread_local: librpma.so is loaded
// with the program, so its TLS is in the static block and the handler's access to it needs
// no allocation.)
struct CopyInFlight {
  sigjmp_buf jump;
  uintptr_t to_begin = 0, to_end = 0;
  uintptr_t from_begin = 0, from_end = 0;
  uintptr_t fault = 0;
  sigset_t mask;  // the thread's signal mask when it faulted
  volatile sig_atomic_t armed = 0;
};
thread_local CopyInFlight t_copy;

struct sigaction g_previous_segv;
struct sigaction g_previous_bus;
std::atomic<bool> g_installed{false};
std::atomic<PinnedPagesAccess> g_pinned{nullptr};

constexpr uintptr_t kPage = 4096;

// Page-granular: a copy routine may fault on the page of a byte it was about to touch.
bool OnPagesOf(uintptr_t address, uintptr_t begin, uintptr_t end) {
  return address >= (begin & ~(kPage - 1)) && address < end + kPage;
}

void OnFault(int signal, siginfo_t* info, void* context) {
  CopyInFlight& copy = t_copy;
  // Only a fault the copy itself caused (si_code > 0: raised by the kernel for an access,
  // not sent with kill), on the pages it copies between.
  if (copy.armed && info->si_code > 0) {
    const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
    if (OnPagesOf(address, copy.to_begin, copy.to_end) ||
        OnPagesOf(address, copy.from_begin, copy.from_end)) {
      copy.armed = 0;
      copy.fault = address;
      copy.mask = static_cast<ucontext_t*>(context)->uc_sigmask;
      siglongjmp(copy.jump, 1);
    }
  }
  PassToPreviousHandler(signal, info, context,
                        signal == SIGSEGV ? g_previous_segv : g_previous_bus);
}

// Copies `length` bytes (within one page of the faulting side) through /proc/self/mem
// (`mem`; -1 if it could not be opened), else through the pinned pages' file. False, with
// errno, if neither could: EFAULT where the other side's buffer was the one at fault.
bool CopyPageAsDevice(int mem, uint8_t* to, const uint8_t* from, size_t length,
                      bool target_faulted) {
  const uint8_t* at = target_faulted ? to : from;
  const off_t address = static_cast<off_t>(reinterpret_cast<uintptr_t>(at));
  ssize_t moved = -1;
  if (mem >= 0) {
    do {
      moved = target_faulted ? pwrite(mem, from, length, address) : pread(mem, to, length, address);
    } while (moved < 0 && errno == EINTR);
    if (moved == static_cast<ssize_t>(length)) return true;
    if (moved < 0 && errno == EFAULT) return false;  // the other side
  }
  PinnedPagesAccess pinned = g_pinned.load(std::memory_order_acquire);
  if (pinned == nullptr) {
    errno = EIO;
    return false;
  }
  return target_faulted
             ? pinned(reinterpret_cast<uintptr_t>(to), const_cast<uint8_t*>(from), length, true)
             : pinned(reinterpret_cast<uintptr_t>(from), to, length, false);
}

// The second try, a page of the faulting side at a time (CopyPageAsDevice).
CopyResult CopyAsDevice(uint8_t* to, const uint8_t* from, size_t length, bool target_faulted) {
  const int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  CopyResult result = CopyResult::kCopied;
  size_t done = 0;
  while (done < length) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(target_faulted ? to : from) + done;
    const size_t piece = std::min(length - done, kPage - at % kPage);
    if (!CopyPageAsDevice(mem, to + done, from + done, piece, target_faulted)) {
      const bool other_side = errno == EFAULT;
      result = other_side != target_faulted ? CopyResult::kTargetUnreachable
                                            : CopyResult::kSourceUnreachable;
      break;
    }
    done += piece;
  }
  if (mem >= 0) close(mem);
  return result;
}

// The access a fault may end: under ThreadSanitizer, a plain loop it does not see, since
// its interceptors hold a lock of the thread's across a copy, which a jump out of the
// handler would leave held (the next interceptor then waits for it forever). Elsewhere,
// memcpy and an atomic store (AddressSanitizer's interceptors hold nothing).
#if defined(__SANITIZE_THREAD__)
// Aligned words move whole, so that an aligned 8-byte store (an atomic write) is one store.
__attribute__((no_sanitize("thread"), noinline)) void Access(uint8_t* to, const uint8_t* from,
                                                             size_t length, bool store64) {
  size_t i = 0;
  if ((reinterpret_cast<uintptr_t>(to) | reinterpret_cast<uintptr_t>(from)) % 8 == 0) {
    for (; i + 8 <= length; i += 8)
      *reinterpret_cast<volatile uint64_t*>(to + i) =
          *reinterpret_cast<const volatile uint64_t*>(from + i);
  }
  for (; i < length; ++i)
    reinterpret_cast<volatile uint8_t*>(to)[i] = reinterpret_cast<const volatile uint8_t*>(from)[i];
  (void)store64;  // an aligned store64 is one word above
}
#else
inline void Access(uint8_t* to, const uint8_t* from, size_t length, bool store64) {
  if (store64) {
    uint64_t value;
    memcpy(&value, from, sizeof(value));
    __atomic_store_n(reinterpret_cast<uint64_t*>(to), value, __ATOMIC_SEQ_CST);
  } else {
    memcpy(to, from, length);
  }
}
#endif

// Runs the copy (or, if `store64`, the atomic store of `value`) with faults on its pages
// caught; not inlined (it calls sigsetjmp).
__attribute__((noinline)) CopyResult Run(uint8_t* to, const uint8_t* from, size_t length,
                                         bool store64) {
  InstallCopyGuard();
  CopyInFlight& copy = t_copy;
  copy.to_begin = reinterpret_cast<uintptr_t>(to);
  copy.to_end = copy.to_begin + length;
  copy.from_begin = reinterpret_cast<uintptr_t>(from);
  copy.from_end = copy.from_begin + length;
  if (sigsetjmp(copy.jump, 0) != 0) {
    // Left the handler by the jump: what it blocked (the signal, and whatever the handlers
    // before it in the chain, or a sanitizer's, block) is blocked still. The mask the
    // interrupted copy ran with comes back, without a system call on the copies that do
    // not fault (sigsetjmp would save it on each).
    pthread_sigmask(SIG_SETMASK, &copy.mask, nullptr);
    const bool target_faulted = OnPagesOf(copy.fault, copy.to_begin, copy.to_end);
    return CopyAsDevice(to, from, length, target_faulted);
  }
  copy.armed = 1;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  Access(to, from, length, store64);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  copy.armed = 0;
  return CopyResult::kCopied;
}

}  // namespace

void SetPinnedPagesAccess(PinnedPagesAccess access) {
  g_pinned.store(access, std::memory_order_release);
}

void InstallCopyGuard() {
  if (g_installed.load(std::memory_order_acquire)) return;
  static std::once_flag once;
  std::call_once(once, [] {
    InstallSignalHandler(SIGSEGV, OnFault, &g_previous_segv, "copies to registered memory");
    InstallSignalHandler(SIGBUS, OnFault, &g_previous_bus, "copies to registered memory");
    g_installed.store(true, std::memory_order_release);
  });
}

CopyResult GuardedCopy(void* to, const void* from, size_t length) {
  if (length == 0) return CopyResult::kCopied;
  return Run(static_cast<uint8_t*>(to), static_cast<const uint8_t*>(from), length, false);
}

CopyResult GuardedStore64(uint64_t* to, uint64_t value) {
  return Run(reinterpret_cast<uint8_t*>(to), reinterpret_cast<const uint8_t*>(&value),
             sizeof(value), true);
}

std::vector<uint8_t> ReadAsDevice(const uint8_t* from, size_t length) {
  std::vector<uint8_t> bytes(length);
  if (GuardedCopy(bytes.data(), from, length) != CopyResult::kCopied)
    std::fill(bytes.begin(), bytes.end(), 0);
  return bytes;
}

}  // namespace rpma_sim
