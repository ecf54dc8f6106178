// mapping_guard.cc -- the guard table and the SIGBUS handler that consults it.
#include "sim/transport/mapping_guard.h"
#include "sim/common/mutex.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include "sim/common/guarded_copy.h"
#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/common/signal_chain.h"

namespace rpma_sim {
namespace {

// A slot is in use while start != 0. Written under the allocator's lock, read by the
// handler without it, as a sequence lock: `version` is odd while a writer changes the
// range, so a handler that sees it odd, or changed by the time it read the range, leaves the slot
// alone (a range half old and half new must never decide what is replaced).
struct Slot {
  std::atomic<uint32_t> version{0};
  std::atomic<uintptr_t> start{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> truncated{false};
};

// Under the allocator's lock: sets the slot's range (start 0: free).
void SetRange(Slot* slot, uintptr_t start, uintptr_t end) {
  slot->version.fetch_add(1, std::memory_order_relaxed);  // odd
  std::atomic_thread_fence(std::memory_order_release);
  slot->truncated.store(false, std::memory_order_relaxed);
  slot->start.store(start, std::memory_order_relaxed);
  slot->end.store(end, std::memory_order_relaxed);
  slot->version.fetch_add(1, std::memory_order_release);  // even
}

// The handler's view of a slot's range: false if a writer is changing it.
bool ReadRange(const Slot& slot, uintptr_t* start, uintptr_t* end) {
  uint32_t before = slot.version.load(std::memory_order_acquire);
  if (before & 1) return false;
  *start = slot.start.load(std::memory_order_relaxed);
  *end = slot.end.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  return slot.version.load(std::memory_order_relaxed) == before && *start != 0;
}

Slot g_slots[MappingGuard::kSlots];
std::atomic<int> g_slots_used{0};  // slots [0, g_slots_used) were ever handed out
uintptr_t g_page_mask = 0;
struct sigaction g_previous;

// The slots handed out and given back, per process (a fork child's are its own).
struct SlotAllocator {
  Mutex mutex;
  std::vector<int> free_slots GUARDED_BY(mutex);
};
PerProcess<SlotAllocator> g_allocator;

// In a fork child, as fork() returns: the parent's mappings of segments and peers' files
// are the parent's connections; the child unmaps them (so that they end when the parent
// and its peers let go of them) and starts with an empty table. Single-threaded there.
void UnmapInForkChild() {
  const int used = g_slots_used.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i) {
    Slot& slot = g_slots[i];
    uintptr_t start = slot.start.load(std::memory_order_relaxed);
    uintptr_t end = slot.end.load(std::memory_order_relaxed);
    // Both sides of a connection within one process guard one mapping: unmapped once.
    if (start != 0 && end > start && slot.version.load(std::memory_order_relaxed) % 2 == 0) {
      for (int j = i + 1; j < used; ++j)
        if (g_slots[j].start.load(std::memory_order_relaxed) == start)
          g_slots[j].start.store(0, std::memory_order_relaxed);
      munmap(reinterpret_cast<void*>(start), end - start);
    }
    slot.version.store(0, std::memory_order_relaxed);
    slot.start.store(0, std::memory_order_relaxed);
    slot.end.store(0, std::memory_order_relaxed);
    slot.truncated.store(false, std::memory_order_relaxed);
  }
  g_slots_used.store(0, std::memory_order_release);
}

const bool g_unmaps_in_child = pthread_atfork(nullptr, nullptr, UnmapInForkChild) == 0;

void OnBusError(int signal, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  // Only an access to a page the file no longer has (BUS_ADRERR); not a signal sent with
  // kill, not a hardware memory error.
  const uintptr_t address =
      info->si_code == BUS_ADRERR ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
  const int used = g_slots_used.load(std::memory_order_acquire);
  uintptr_t replaced_from = 0;
  uintptr_t replaced_to = 0;
  for (int i = 0; i < used && address != 0; ++i) {
    Slot& slot = g_slots[i];
    uintptr_t start, end;
    if (!ReadRange(slot, &start, &end) || address < start || address >= end) continue;
    if (replaced_to == 0) {
      // The file ends before this page: private zeroed pages take the place of the rest.
      uintptr_t page = address & g_page_mask;
      void* zeros = mmap(reinterpret_cast<void*>(page), end - page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      if (zeros == MAP_FAILED) break;
      replaced_from = page;
      replaced_to = end;
    }
    // Every guard of the range (both sides of a connection within this process) learns it.
    if (start < replaced_to && end > replaced_from)
      slot.truncated.store(true, std::memory_order_release);
  }
  if (replaced_to != 0) {
    errno = saved_errno;
    return;  // the access is retried against the zeros
  }
  // Not a guarded mapping: whoever handled SIGBUS before this guard was installed.
  errno = saved_errno;
  PassToPreviousHandler(signal, info, context, g_previous);
}

void InstallHandler() {
  g_page_mask = ~(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)) - 1);
  InstallCopyGuard();  // first: this handler sees a fault before it (guarded_copy.h)
  InstallSignalHandler(SIGBUS, OnBusError, &g_previous, "shared mappings");
}

}  // namespace

MappingGuard::MappingGuard(const void* start, size_t length) {
  static std::once_flag installed;
  std::call_once(installed, InstallHandler);
  SlotAllocator& allocator = g_allocator.Get();
  MutexLock lock(&allocator.mutex);
  std::vector<int>& free_slots = allocator.free_slots;
  if (!free_slots.empty()) {
    slot_ = free_slots.back();
    free_slots.pop_back();
  } else if (g_slots_used.load(std::memory_order_relaxed) < kSlots) {
    slot_ = g_slots_used.load(std::memory_order_relaxed);
  } else {
    static bool told = false;
    if (!told)
      SIM_LOG_WARNING(
          "more than %d shared mappings: the later ones are not guarded "
          "against a peer that truncates them",
          kSlots);
    told = true;
    return;
  }
  const uintptr_t begin = reinterpret_cast<uintptr_t>(start);
  SetRange(&g_slots[slot_], begin, begin + length);
  truncated_ = &g_slots[slot_].truncated;
  if (slot_ == g_slots_used.load(std::memory_order_relaxed))
    g_slots_used.store(slot_ + 1, std::memory_order_release);
}

MappingGuard::~MappingGuard() {
  if (slot_ < 0) return;
  SlotAllocator& allocator = g_allocator.Get();
  MutexLock lock(&allocator.mutex);
  SetRange(&g_slots[slot_], 0, 0);
  allocator.free_slots.push_back(slot_);
}

}  // namespace rpma_sim
