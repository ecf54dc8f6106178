// shared_pages.cc -- the table of moved extents, the moves both ways, the SIGSEGV handler
// that makes a store wait out a move, and the copies a fork child gets.
#include "sim/transport/shared_pages.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "sim/common/guarded_copy.h"
#include "sim/common/log.h"
#include "sim/common/mutex.h"
#include "sim/common/signal_chain.h"
#include "sim/transport/page_moves.h"

namespace rpma_sim {
namespace {

uintptr_t PageSize() {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// ---------------------------------------------------------------------------------------
// Ranges being moved, read by the SIGSEGV handler without a lock. A slot is in use while
// start != 0 and finished_ns == 0; claimed under the table's lock, given back without it.
// While a range is read-only its mover calls nothing that allocates or takes a lock: a
// thread waiting in the handler may hold malloc's lock or the table's (its memory may be
// on the pages).
//
// A slot given back keeps its range for kRetryWindowNs (unless every other slot is taken
// meanwhile): an access that faulted just before the move ended may reach the handler just
// after, and is retried too, once: a store that faults again at the same address on the same
// thread faults for another reason (the application made the pages read-only) and goes to
// the handler before this one at once; a load, if the byte cannot be read now.
struct MovingSlot {
  std::atomic<uintptr_t> start{0};
  std::atomic<uintptr_t> end{0};
  std::atomic<int64_t> finished_ns{0};  // CLOCK_MONOTONIC when given back; 0 while moving
};
constexpr int64_t kRetryWindowNs = 1000 * 1000 * 1000;
// This thread's last store retried after its move had ended: its address and the move's end.
// (Plain thread_locals: librpma.so is loaded with the program, so its TLS is in the static
// block and reading it in the handler allocates nothing; an initial-exec model would make
// the linker export them.)
thread_local uintptr_t t_retried_store = 0;
thread_local int64_t t_retried_move = 0;
MovingSlot g_moving[SharedPages::kMaxMoving];
struct sigaction g_previous_segv;

int64_t MonotonicNs() {  // async-signal-safe
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Whether the fault was a store (not a load or an instruction fetch).
bool IsStore(void* context) {
#if defined(__x86_64__)
  const ucontext_t* user = static_cast<const ucontext_t*>(context);
  return (user->uc_mcontext.gregs[REG_ERR] & 2) != 0;  // the page fault's "write" bit
#else
  (void)context;
  return true;
#endif
}

// Whether a byte at `address` can be read now (async-signal-safe). Where the system call is
// not allowed, it is taken to be: a load that faults again comes back here.
bool ReadableNow(uintptr_t address) {
  char byte;
  struct iovec local = {&byte, 1};
  struct iovec remote = {reinterpret_cast<void*>(address), 1};
  const int saved = errno;
  const bool readable = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1 ||
                        errno == ENOSYS || errno == EPERM;
  errno = saved;
  return readable;
}

// A store into a range being moved found it read-only (or a load found it inaccessible, for
// the moment its pages are set aside): it waits until the move is over and is retried
// against the new mapping. Any other fault goes to the handler before this one.
void OnSegmentationFault(int signal, siginfo_t* info, void* context) {
  const uintptr_t address =
      info->si_code == SEGV_ACCERR ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
  for (MovingSlot& slot : g_moving) {
    if (address == 0) break;
    const uintptr_t start = slot.start.load(std::memory_order_acquire);
    const int64_t finished = slot.finished_ns.load(std::memory_order_acquire);
    if (start == 0 || address < start || address >= slot.end.load(std::memory_order_acquire))
      continue;
    if (finished != 0 && MonotonicNs() - finished > kRetryWindowNs) continue;
    if (finished != 0) {
      // After the move: a load the application's own protection refuses is its own fault, as
      // is a store that faulted again once retried.
      if (!IsStore(context)) {
        if (!ReadableNow(address)) continue;
      } else if (t_retried_store == address && t_retried_move == finished) {
        t_retried_store = 0;
        continue;
      } else {
        t_retried_store = address;
        t_retried_move = finished;
      }
    }
    while (slot.start.load(std::memory_order_acquire) == start &&
           slot.finished_ns.load(std::memory_order_acquire) == 0)
      sched_yield();
    return;  // retried; a slot reused meanwhile only costs one more fault
  }
  PassToPreviousHandler(signal, info, context, g_previous_segv);
}

bool AccessMovedPages(uintptr_t address, uint8_t* bytes, size_t length, bool write);

void InstallHandlerOnce() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    InstallCopyGuard();  // first: this handler sees a fault before it (guarded_copy.h)
    SetPinnedPagesAccess(AccessMovedPages);
    InstallSignalHandler(SIGSEGV, OnSegmentationFault, &g_previous_segv, "moved heap pages");
  });
}

// ---------------------------------------------------------------------------------------
// The table.

struct Extent {
  enum State { kMoving, kShared, kMovingBack };
  uint64_t id = 0;
  uintptr_t start = 0;
  uintptr_t end = 0;
  RegionFile file;         // the region file it moves into (page_moves.h)
  uint64_t file_slot = 0;  // and its slot there
  MovedRange moved;        // once kShared
  int holders = 0;
  State state = kMoving;
  int slot = -1;  // in g_moving while not kShared
  // Between BeforeFork and the handlers after the fork: the child's copy, and the parts of
  // the range still moved then, with their protections.
  void* fork_copy = MAP_FAILED;
  Protections fork_parts;
};

// A region file, with how many of its slots are taken and how many extents are in it now.
struct FileInUse {
  RegionFile file;
  uint64_t slots = kRegionSlots;  // how many it has
  uint64_t slots_taken = 0;
  int extents = 0;
};

struct Table {
  Mutex mutex;
  std::vector<Extent> extents GUARDED_BY(mutex);
  uint64_t next_id GUARDED_BY(mutex) = 1;
  // The region files open: the last takes new ranges until its slots are all taken (a slot
  // is never taken twice); one whose slots are all taken is closed when no extent is left
  // in it. While one is being made, a thread that needs it waits.
  std::vector<FileInUse> files GUARDED_BY(mutex);
  bool making_file GUARDED_BY(mutex) = false;
  uint64_t slots_per_file GUARDED_BY(mutex) = kRegionSlots;
};
Table g_table;  // plain, not PerProcess: a fork child's handler makes it the child's own

Extent* FindLocked(uint64_t id) REQUIRES(g_table.mutex) {
  for (Extent& extent : g_table.extents)
    if (extent.id == id) return &extent;
  return nullptr;
}

bool FileHasRoomLocked() REQUIRES(g_table.mutex) {
  return !g_table.files.empty() && g_table.files.back().slots_taken < g_table.files.back().slots;
}

// A slot of the newest region file for `extent` to move into; false if it has none left.
bool TakeFileSlotLocked(Extent* extent) REQUIRES(g_table.mutex) {
  if (!FileHasRoomLocked()) return false;
  FileInUse& file = g_table.files.back();
  extent->file = file.file;
  extent->file_slot = file.slots_taken++;
  ++file.extents;
  return true;
}

// Takes an extent out of the table. Returns its region file if the file is to be closed now
// (its slots all taken and no extent left in it: the caller closes it once it lets go of
// the lock), else one with fd -1.
RegionFile EraseLocked(uint64_t id) REQUIRES(g_table.mutex) {
  Extent* extent = FindLocked(id);
  if (extent == nullptr) return RegionFile();
  RegionFile to_close;
  for (auto file = g_table.files.begin(); file != g_table.files.end(); ++file) {
    if (file->file.fd != extent->file.fd) continue;
    if (--file->extents == 0 && file->slots_taken == file->slots) {
      to_close = file->file;
      g_table.files.erase(file);
    }
    break;
  }
  g_table.extents.erase(g_table.extents.begin() + (extent - g_table.extents.data()));
  return to_close;
}

// Closes a region file, unless the application closed its descriptor and the number is
// another file now.
void CloseFile(const RegionFile& file) {
  if (file.fd >= 0 && StillTheFile(file.fd, file.device, file.inode)) close(file.fd);
}

// Makes a region file with a free slot if there is none: the system calls without the lock;
// a thread that needs one meanwhile waits for it. (If the kernel refuses, the ranges that
// would have moved stay where they are.)
void MakeFileWithRoomIfNeeded() {
  {
    MutexLock lock(&g_table.mutex);
    while (g_table.making_file) {
      g_table.mutex.Unlock();
      sched_yield();
      g_table.mutex.Lock();
    }
    if (FileHasRoomLocked()) return;
    g_table.making_file = true;
  }
  RegionFile file;
  const bool made = MakeRegionFile(&file);
  MutexLock lock(&g_table.mutex);
  g_table.making_file = false;
  if (made) g_table.files.push_back(FileInUse{file, g_table.slots_per_file, 0, 0});
}

// Waits (the lock let go meanwhile) until no extent overlapping [start, end) is moving, so
// that the caller sees each as shared or gone.
void WaitUntilSettledLocked(uintptr_t start, uintptr_t end) REQUIRES(g_table.mutex) {
  for (;;) {
    bool settled = true;
    for (const Extent& extent : g_table.extents)
      if (extent.start < end && start < extent.end) settled &= extent.state == Extent::kShared;
    if (settled) return;
    g_table.mutex.Unlock();
    sched_yield();
    g_table.mutex.Lock();
  }
}

// A slot for a move of [start, end): a free one, else the one that ended longest ago (its
// retry window cut short: only a fault that waited over a second to reach the handler
// could miss it); -1 only while every slot is moving.
int ClaimSlotLocked(uintptr_t start, uintptr_t end) REQUIRES(g_table.mutex) {
  const int64_t now = MonotonicNs();
  int chosen = -1;
  int64_t oldest = INT64_MAX;
  for (int i = 0; i < SharedPages::kMaxMoving; ++i) {
    MovingSlot& slot = g_moving[i];
    const int64_t finished = slot.finished_ns.load(std::memory_order_relaxed);
    if (slot.start.load(std::memory_order_relaxed) == 0 ||
        (finished != 0 && now - finished > kRetryWindowNs)) {
      chosen = i;
      break;
    }
    if (finished != 0 && finished < oldest) {
      oldest = finished;
      chosen = i;
    }
  }
  if (chosen < 0) return -1;
  MovingSlot& slot = g_moving[chosen];
  slot.start.store(0, std::memory_order_release);
  slot.finished_ns.store(0, std::memory_order_release);
  slot.end.store(end, std::memory_order_release);
  slot.start.store(start, std::memory_order_release);
  return chosen;
}

// Claims a slot to move `id` back, waiting for one to be free (every holder of a slot
// finishes its move without the lock). False if meanwhile a new region took the pages (and
// perhaps left them again, its own release moving them back).
bool ClaimSlotToMoveBackLocked(uint64_t id, int* slot) REQUIRES(g_table.mutex) {
  for (;;) {
    const Extent* extent = FindLocked(id);
    if (extent == nullptr || extent->holders > 0 || extent->state != Extent::kShared) return false;
    *slot = ClaimSlotLocked(extent->start, extent->end);
    if (*slot >= 0) return true;
    g_table.mutex.Unlock();
    sched_yield();
    g_table.mutex.Lock();
  }
}

void ReleaseSlot(int slot) {
  if (slot >= 0) g_moving[slot].finished_ns.store(MonotonicNs(), std::memory_order_release);
}

// Guarded copies' way to moved pages the application made unwritable or unmapped
// (guarded_copy.h): their part of the region file. The region the copy is for stays registered
// meanwhile, so its extent and file stay too; the system call is made without the table's lock.
bool AccessMovedPages(uintptr_t address, uint8_t* bytes, size_t length, bool write) {
  MovedRange moved;
  off_t offset = 0;
  {
    MutexLock lock(&g_table.mutex);
    for (const Extent& extent : g_table.extents)
      if (extent.state == Extent::kShared && extent.start <= address &&
          address + length <= extent.end) {
        moved = extent.moved;
        offset = static_cast<off_t>(extent.moved.offset + (address - extent.start));
        break;
      }
  }
  const int fd = moved.fd;
  if (fd < 0 || !StillTheFile(fd, moved.device, moved.inode)) {
    errno = EIO;
    return false;
  }
  ssize_t done = write ? pwrite(fd, bytes, length, offset) : pread(fd, bytes, length, offset);
  return done == static_cast<ssize_t>(length);
}

std::string FdPath(int fd) {
  return "/proc/" + std::to_string(getpid()) + "/fd/" + std::to_string(fd);
}

}  // namespace

std::unique_ptr<SharedPages> SharedPages::Share(const void* addr, size_t length, PageMoves moves) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t page = PageSize();
  if (length == 0 || begin + length < begin || begin + length + page < begin + length)
    return nullptr;
  // Every page the range touches: moved pages among them are held while it is registered.
  const uintptr_t span_start = begin & ~(page - 1);
  const uintptr_t span_end = (begin + length + page - 1) & ~(page - 1);
  // The pages it covers whole, which may move: the bytes of other heap objects, and of the
  // allocator, never do (a system call writing to them must never find them read-only).
  const uintptr_t start = (begin + page - 1) & ~(page - 1);
  const uintptr_t end = (begin + length) & ~(page - 1);
  InstallHandlerOnce();
  if (end > start && moves == PageMoves::kAllowed) MakeFileWithRoomIfNeeded();
  std::unique_ptr<SharedPages> pages(new SharedPages());
  Extent moving;
  {
    MutexLock lock(&g_table.mutex);
    WaitUntilSettledLocked(span_start, span_end);
    bool whole_pages_free = end > start && moves == PageMoves::kAllowed;
    for (Extent& extent : g_table.extents) {
      if (extent.end <= span_start || span_end <= extent.start) continue;
      ++extent.holders;
      pages->extents_.push_back(extent.id);
      if (extent.end <= start || end <= extent.start) continue;
      whole_pages_free = false;
      if (extent.start <= start && end <= extent.end)
        pages->SetFile(extent.start, extent.end, extent.moved);
    }
    if (whole_pages_free) moving.slot = ClaimSlotLocked(start, end);
    if (moving.slot >= 0 && !TakeFileSlotLocked(&moving)) {
      g_moving[moving.slot].start.store(0, std::memory_order_release);  // unused
      moving.slot = -1;
    }
    if (moving.slot < 0) return pages->extents_.empty() ? nullptr : std::move(pages);
    moving.id = g_table.next_id++;
    moving.start = start;
    moving.end = end;
    moving.holders = 1;
    g_table.extents.push_back(moving);
  }
  // Outside the lock: the system calls and the copy.
  bool moved = IsPrivateAnonymous(start, end) &&
               MoveToMemfd(start, end, moving.file, moving.file_slot, &moving.moved);
  // Before the lock: a thread that faulted on the pages may hold it (the table itself is
  // heap memory, and may be on them).
  ReleaseSlot(moving.slot);
  RegionFile to_close;
  {
    MutexLock lock(&g_table.mutex);
    if (moved) {
      Extent* extent = FindLocked(moving.id);
      extent->moved = moving.moved;
      extent->slot = -1;
      extent->state = Extent::kShared;
      pages->extents_.push_back(moving.id);
      pages->SetFile(start, end, moving.moved);
    } else {
      to_close = EraseLocked(moving.id);
    }
  }
  CloseFile(to_close);
  return pages->extents_.empty() ? nullptr : std::move(pages);
}

SharedPages::~SharedPages() {
  for (uint64_t id : extents_) Release(id);
}

void SharedPages::Release(uint64_t id) {
  Extent leaving;
  {
    MutexLock lock(&g_table.mutex);
    Extent* extent = FindLocked(id);
    if (extent == nullptr || --extent->holders > 0) return;
    int slot;
    if (!ClaimSlotToMoveBackLocked(id, &slot)) return;
    extent = FindLocked(id);
    extent->slot = slot;
    extent->state = Extent::kMovingBack;
    leaving = *extent;
  }
  const bool back = MoveBack(leaving.start, leaving.end, leaving.moved);
  ReleaseSlot(leaving.slot);  // before the lock and the log, as in Share
  if (!back)
    SIM_LOG_WARNING("cannot move [%p, %p) back to private memory: %s; it stays shared",
                    reinterpret_cast<void*>(leaving.start), reinterpret_cast<void*>(leaving.end),
                    strerror(errno));
  RegionFile to_close;
  {
    MutexLock lock(&g_table.mutex);
    if (back) {
      to_close = EraseLocked(id);
    } else {
      // Still shared, so still in the table: a fork gives the child its own copy, and a
      // region registered on the pages later holds them (its release tries again).
      Extent* extent = FindLocked(id);
      extent->state = Extent::kShared;
      extent->slot = -1;
      extent->moved.aside = MAP_FAILED;  // MoveBack gave it up
    }
  }
  CloseFile(to_close);
}

void SharedPages::SetFile(uintptr_t start, uintptr_t end, const MovedRange& moved) {
  start_ = start;
  end_ = end;
  path_ = FdPath(moved.fd);
  file_offset_ = moved.offset;
  device_ = moved.device;
  inode_ = moved.inode;
}

void SharedPages::BeforeFork() NO_THREAD_SAFETY_ANALYSIS {
  g_table.mutex.Lock();  // held until after the fork
  WaitUntilSettledLocked(0, UINTPTR_MAX);
  // What the application marked MADV_DONTFORK since the move the child does not get, from
  // the kernel nor from here.
  const std::vector<std::pair<uintptr_t, uintptr_t>> not_copied =
      g_table.extents.empty() ? std::vector<std::pair<uintptr_t, uintptr_t>>() : NotCopiedOnFork();
  // Not read-only meanwhile (the engine or the application may be writing to a region):
  // the copy is the region as a device's DMA under way would leave it.
  for (Extent& extent : g_table.extents) {
    // What the application left of the range (it may have unmapped some, or mapped
    // something else there: the child keeps that), copied from the file (the range may
    // not be readable, by the application's protection).
    MovedParts(extent.start, extent.end, extent.moved, &extent.fork_parts);
    RemoveRanges(not_copied, &extent.fork_parts);
    extent.fork_copy = extent.fork_parts.empty()
                           ? MAP_FAILED
                           : CopyForChild(extent.start, extent.end, extent.moved);
  }
}

void SharedPages::AfterForkInParent() NO_THREAD_SAFETY_ANALYSIS {
  for (Extent& extent : g_table.extents) {
    if (extent.fork_copy != MAP_FAILED) munmap(extent.fork_copy, extent.end - extent.start);
    extent.fork_copy = MAP_FAILED;
  }
  g_table.mutex.Unlock();
}

void SharedPages::AfterForkInChild() NO_THREAD_SAFETY_ANALYSIS {
  for (Extent& extent : g_table.extents) {
    // The child's own copy in place of the parent's shared pages.
    PutChildCopy(extent.start, extent.end, extent.fork_copy, extent.fork_parts, extent.moved);
  }
  for (const FileInUse& file : g_table.files) CloseFile(file.file);  // the child makes its own
  g_table.extents.clear();
  g_table.files.clear();
  g_table.making_file = false;
  for (MovingSlot& slot : g_moving) {
    slot.start.store(0, std::memory_order_relaxed);
    slot.finished_ns.store(0, std::memory_order_relaxed);
  }
  g_table.mutex.Unlock();
}

const bool g_fork_handlers = pthread_atfork(SharedPages::BeforeFork, SharedPages::AfterForkInParent,
                                            SharedPages::AfterForkInChild) == 0;

bool SharedPages::BackingOf(const void* addr, size_t length, FileBacking* backing) const {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t from = std::max(begin, start_);
  const uintptr_t to = std::min(begin + length, end_);
  if (path_.empty() || to <= from) return false;
  backing->path = path_;
  backing->device = device_;
  backing->inode = inode_;
  backing->offset = file_offset_ + (from - start_);
  backing->held_from = from - begin;
  backing->held_length = to - from;
  return true;
}

size_t SharedPages::ExtentCount() {
  MutexLock lock(&g_table.mutex);
  return g_table.extents.size();
}

void SharedPages::SetSlotsPerFileForTest(uint64_t slots) {
  MutexLock lock(&g_table.mutex);
  g_table.slots_per_file = std::min(std::max<uint64_t>(slots, 1), kRegionSlots);
}

size_t SharedPages::FileCount() {
  MutexLock lock(&g_table.mutex);
  return g_table.files.size();
}

}  // namespace rpma_sim
