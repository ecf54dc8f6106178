// io_service.cc -- the process's Boost.Asio io_context and the progress engine's thread, one
// of each per process (a fork child gets its own: per_process.h). Never destroyed.
#include "sim/fabric/io_service.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <system_error>

#include "sim/common/mutex.h"
#include "sim/common/per_process.h"

namespace rpma_sim {
namespace {

// Keeps the progress engine's run() going until the process exits.
using ProgressGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

// One process's engine. A child's io_context is new: the parent's epoll instance is shared
// with the parent (an epoll fd copied by fork refers to the same one), so the child never
// registers anything with it.
// While the process forks, its engine thread waits parked in a handler of its own (see
// ParkEngineForFork).
struct ForkPark {
  Mutex mutex;
  CondVar changed;
  uint64_t fork GUARDED_BY(mutex) = 0;  // the fork it is parked for (or asked to park for)
  bool parked GUARDED_BY(mutex) = false;
  bool released GUARDED_BY(mutex) = true;
};

struct Engine {
  boost::asio::io_context context;
  std::atomic<bool> reactor_made{false};
  std::once_flag started;
  std::unique_ptr<ProgressGuard> guard;
  pthread_t thread{};                    // set once, by the call_once of `started`
  std::atomic<bool> thread_made{false};  // likewise (read by a fork's prepare handler)
  ForkPark park;
};

// The engine thread's stack: a mapping of its own, not one from glibc's cache of the stacks
// of threads that have ended. In a fork child those are its parent's threads, and a thread
// on one of them has the same id as a thread of the parent, which ThreadSanitizer still
// counts as alive ("dup thread with used id"). A new mapping gives the child's engine an id
// no thread of the line ever had. The lowest page is its guard.
constexpr size_t kEngineStackSize = 8 << 20;

// LeakSanitizer's call, when it is linked in (ASan): memory to scan for pointers at exit.
extern "C" void __lsan_register_root_region(const void* begin, size_t size) __attribute__((weak));

// The stacks of the engine threads of this process and of the processes it was forked from
// (at most one per generation; a line deeper than the table goes unrecorded). A fork child
// has no such threads, but what they held on their stacks (the operations their engine was
// running) stays the ancestors', never freed: LeakSanitizer is told to scan those stacks so
// that it does not report it as leaked at the child's exit.
constexpr int kMaxEngineStacks = 64;
std::atomic<void*> g_engine_stacks[kMaxEngineStacks];
std::atomic<int> g_engine_stacks_used{0};

void RecordEngineStack(void* stack) {
  const int slot = g_engine_stacks_used.fetch_add(1, std::memory_order_acq_rel);
  if (slot < kMaxEngineStacks) g_engine_stacks[slot].store(stack, std::memory_order_release);
}

// In a fork child, as fork() returns.
void ScanAncestorsEngineStacks() {
  if (__lsan_register_root_region == nullptr) return;
  const int used = std::min(g_engine_stacks_used.load(std::memory_order_acquire), kMaxEngineStacks);
  for (int slot = 0; slot < used; ++slot) {
    void* stack = g_engine_stacks[slot].load(std::memory_order_acquire);
    if (stack != nullptr) __lsan_register_root_region(stack, kEngineStackSize);
  }
}

const bool g_scans_in_child = pthread_atfork(nullptr, nullptr, ScanAncestorsEngineStacks) == 0;

void* EngineMain(void* engine) {
  static_cast<Engine*>(engine)->context.run();
  return nullptr;
}

// Starts `engine`'s thread; throws std::system_error when it cannot (as std::thread does).
void StartEngineThread(Engine* engine) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* stack = mmap(nullptr, kEngineStackSize, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (stack == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "mmap");
  mprotect(stack, page, PROT_NONE);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstack(&attributes, stack, kEngineStackSize);
  const int error = pthread_create(&engine->thread, &attributes, EngineMain, engine);
  pthread_attr_destroy(&attributes);
  if (error != 0) {
    munmap(stack, kEngineStackSize);
    throw std::system_error(error, std::generic_category(), "pthread_create");
  }
  engine->thread_made.store(true, std::memory_order_release);  // its stack stays mapped

  RecordEngineStack(stack);
}

// A global: what it holds stays reachable for leak checkers.
PerProcess<Engine> g_engine;

// A fork must not catch the engine thread inside a lock: the child would inherit it held by
// a thread it does not have. The simulator's own locks are the parent's alone (a child
// makes its own objects, per_process.h), but the engine also takes the allocator's, and
// AddressSanitizer's allocator (before LLVM 18) takes no part in fork: a child whose parent
// forked while its engine allocated hung in its first allocation. So the forking thread
// parks the engine in a handler that holds nothing, and lets it go once fork() has
// returned in the parent. Bounded: if the engine does not park within kParkWait (it runs a
// long handler, or waits for a lock the forking thread holds), the fork goes on without.
constexpr auto kParkWait = std::chrono::milliseconds(500);

// On the engine thread: waits, holding nothing, until the fork `fork` has happened.
void ParkedHandler(Engine* engine, uint64_t fork) {
  ForkPark& park = engine->park;
  MutexLock lock(&park.mutex);
  if (park.fork != fork || park.released) return;  // too late: that fork went on without it
  park.parked = true;
  park.changed.SignalAll();
  while (park.fork == fork && !park.released) park.changed.Wait(&park.mutex);
  park.parked = false;
}

// pthread_atfork's prepare handler, in the forking thread.
void ParkEngineForFork() {
  Engine* engine = g_engine.Peek();
  if (engine == nullptr || !engine->thread_made.load(std::memory_order_acquire) ||
      pthread_equal(pthread_self(), engine->thread))
    return;
  ForkPark& park = engine->park;
  uint64_t fork;
  {
    MutexLock lock(&park.mutex);
    fork = ++park.fork;
    park.released = false;
  }
  boost::asio::post(engine->context, [engine, fork] { ParkedHandler(engine, fork); });
  const auto deadline = std::chrono::steady_clock::now() + kParkWait;
  MutexLock lock(&park.mutex);
  while (!park.parked && park.changed.WaitUntil(&park.mutex, deadline)) {
  }
}

// The parent's handler, as fork() returns there.
void ReleaseEngineAfterFork() {
  Engine* engine = g_engine.Peek();
  if (engine == nullptr) return;
  MutexLock lock(&engine->park.mutex);
  engine->park.released = true;
  engine->park.changed.SignalAll();
}

const bool g_parks_for_fork =
    pthread_atfork(ParkEngineForFork, ReleaseEngineAfterFork, nullptr) == 0;

// Runs at exit, before the statics Asio's thread uses are destroyed (they were constructed
// before this was registered): the engine's thread must not be inside run() by then. A
// fork child inherits its parent's registration and may add its own: each stops the
// engine of the process it runs in, if that one started it.
void StopProgressEngine() {
  Engine& engine = g_engine.Get();
  if (!engine.thread_made.exchange(false)) return;
  engine.context.stop();
  pthread_join(engine.thread, nullptr);
}

}  // namespace

boost::asio::io_context& IoContext() { return g_engine.Get().context; }

bool EnsureReactor(std::string* error) {
  Engine& engine = g_engine.Get();
  if (engine.reactor_made.load(std::memory_order_acquire)) return true;
  try {
    boost::asio::steady_timer first(engine.context);  // a timer's service needs the reactor
  } catch (const boost::system::system_error& failure) {
    *error = failure.what();
    return false;
  }
  engine.reactor_made.store(true, std::memory_order_release);
  return true;
}

void EnsureProgressEngine() {
  Engine& engine = g_engine.Get();
  std::call_once(engine.started, [&engine] {
    engine.guard.reset(new ProgressGuard(engine.context.get_executor()));
    StartEngineThread(&engine);
    atexit(StopProgressEngine);
  });
}

void RunAt(std::chrono::steady_clock::time_point deadline, std::function<void()> task) {
  EnsureProgressEngine();
  auto timer = std::make_shared<boost::asio::steady_timer>(IoContext(), deadline);
  timer->async_wait([timer, task = std::move(task)](const boost::system::error_code&) { task(); });
}

void RunSoon(std::function<void()> task) {
  EnsureProgressEngine();
  boost::asio::post(IoContext(), std::move(task));
}

}  // namespace rpma_sim
