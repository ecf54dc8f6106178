// mapping_guard.cc -- the guard table and the SIGBUS handler that consults it.
#include "sim/transport/mapping_guard.h"

#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

// A slot is in use while start != 0. Written under g_mutex, read by the handler without it:
// end is stored before start, and start cleared before end.
struct Slot {
  std::atomic<uintptr_t> start{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> truncated{false};
};

Slot g_slots[MappingGuard::kSlots];
std::atomic<int> g_slots_used{0};  // slots [0, g_slots_used) were ever handed out
uintptr_t g_page_mask = 0;
struct sigaction g_previous;

std::mutex g_mutex;
std::vector<int>& FreeSlots() {  // guarded by g_mutex
  static auto* free_slots = new std::vector<int>;
  return *free_slots;
}

void OnBusError(int signal, siginfo_t* info, void* context) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(info->si_addr);
  const int used = g_slots_used.load(std::memory_order_acquire);
  uintptr_t replaced_from = 0;
  uintptr_t replaced_to = 0;
  for (int i = 0; i < used; ++i) {
    Slot& slot = g_slots[i];
    uintptr_t start = slot.start.load(std::memory_order_acquire);
    if (start == 0 || address < start) continue;
    uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (address >= end) continue;
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
  if (replaced_to != 0) return;  // the access is retried against the zeros
  // Not a guarded mapping: whoever handled SIGBUS before this guard was installed.
  if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction != nullptr) {
    g_previous.sa_sigaction(signal, info, context);
    return;
  }
  if (!(g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_handler != SIG_DFL &&
      g_previous.sa_handler != SIG_IGN) {
    g_previous.sa_handler(signal);
    return;
  }
  // The default: the access faults again and kills the process, as without the guard.
  struct sigaction fallback;
  sigemptyset(&fallback.sa_mask);
  fallback.sa_flags = 0;
  fallback.sa_handler = SIG_DFL;
  sigaction(SIGBUS, &fallback, nullptr);
}

void InstallHandler() {
  g_page_mask = ~(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)) - 1);
  struct sigaction action;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  action.sa_sigaction = OnBusError;
  if (sigaction(SIGBUS, &action, &g_previous) != 0)
    SIM_LOG_WARNING("cannot install the SIGBUS guard of shared mappings");
}

}  // namespace

MappingGuard::MappingGuard(const void* start, size_t length) {
  static std::once_flag installed;
  std::call_once(installed, InstallHandler);
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<int>& free_slots = FreeSlots();
  if (!free_slots.empty()) {
    slot_ = free_slots.back();
    free_slots.pop_back();
  } else if (g_slots_used.load(std::memory_order_relaxed) < kSlots) {
    slot_ = g_slots_used.load(std::memory_order_relaxed);
  } else {
    static bool told = false;
    if (!told) SIM_LOG_WARNING("more than %d shared mappings: the later ones are not guarded "
                               "against a peer that truncates them", kSlots);
    told = true;
    return;
  }
  Slot& slot = g_slots[slot_];
  const uintptr_t begin = reinterpret_cast<uintptr_t>(start);
  slot.truncated.store(false, std::memory_order_relaxed);
  slot.end.store(begin + length, std::memory_order_release);
  slot.start.store(begin, std::memory_order_release);
  if (slot_ == g_slots_used.load(std::memory_order_relaxed))
    g_slots_used.store(slot_ + 1, std::memory_order_release);
}

MappingGuard::~MappingGuard() {
  if (slot_ < 0) return;
  Slot& slot = g_slots[slot_];
  slot.start.store(0, std::memory_order_release);
  slot.end.store(0, std::memory_order_release);
  std::lock_guard<std::mutex> lock(g_mutex);
  FreeSlots().push_back(slot_);
}

bool MappingGuard::truncated() const {
  return slot_ >= 0 && g_slots[slot_].truncated.load(std::memory_order_acquire);
}

}  // namespace rpma_sim
