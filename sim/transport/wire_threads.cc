// wire_threads.cc -- the registry of wire threads and its exit handler.
#include "sim/transport/wire_threads.h"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <iterator>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "sim/common/log.h"
#include "sim/fabric/io_service.h"

namespace rpma_sim {
namespace {

// How long the exit handler waits for the wire threads to end after it told them to stop.
constexpr auto kExitJoinBound = std::chrono::seconds(2);

struct WireThread {
  std::thread thread;
  std::function<void()> stop;
  bool finished = false;
};

struct Registry {
  std::mutex mutex;
  std::condition_variable finished;  // a thread's body returned
  std::list<WireThread> threads;     // guarded by mutex
  pid_t owner = 0;                   // the process whose threads these are (not a fork child)
};

// Never destroyed: threads may still look it up while static destructors run.
Registry& TheRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

// Takes the finished threads out of the list. Requires registry.mutex.
std::list<WireThread> TakeFinished(Registry& registry) {
  std::list<WireThread> done;
  for (auto it = registry.threads.begin(); it != registry.threads.end();) {
    auto next = std::next(it);
    if (it->finished && it->thread.joinable()) done.splice(done.end(), registry.threads, it);
    it = next;
  }
  return done;
}

void JoinAll(std::list<WireThread>* threads) {
  for (WireThread& entry : *threads) entry.thread.join();
}

void StopWireThreadsAtExit() {
  Registry& registry = TheRegistry();
  std::vector<std::function<void()>> stops;
  {
    std::lock_guard<std::mutex> lock(registry.mutex);
    if (registry.owner != getpid()) return;  // a fork child: the threads are the parent's
    for (WireThread& entry : registry.threads)
      if (!entry.finished) stops.push_back(entry.stop);
  }
  for (auto& stop : stops) stop();
  const auto deadline = std::chrono::steady_clock::now() + kExitJoinBound;
  for (;;) {
    std::list<WireThread> done;
    size_t left = 0;
    {
      std::unique_lock<std::mutex> lock(registry.mutex);
      registry.finished.wait_until(lock, deadline, [&registry] {
        for (const WireThread& entry : registry.threads)
          if (entry.finished && entry.thread.joinable()) return true;
        return registry.threads.empty();
      });
      done = TakeFinished(registry);
      left = registry.threads.size();
    }
    JoinAll(&done);
    if (left == 0) return;
    if (done.empty() && std::chrono::steady_clock::now() >= deadline) {
      SIM_LOG_WARNING("%zu wire threads did not end at exit within %lld s; leaving them", left,
                      static_cast<long long>(kExitJoinBound.count()));
      std::lock_guard<std::mutex> lock(registry.mutex);
      for (WireThread& entry : registry.threads)
        if (entry.thread.joinable()) entry.thread.detach();
      registry.threads.clear();
      return;
    }
  }
}

}  // namespace

void StartWireThread(std::function<void()> body, std::function<void()> stop) {
  Registry& registry = TheRegistry();
  static const bool registered = [&registry] {
    // After the progress engine's exit handler, so that this one runs first: a wire's last
    // words (OnWireClosed) may still need the engine.
    EnsureProgressEngine();
    registry.owner = getpid();
    atexit(StopWireThreadsAtExit);
    return true;
  }();
  (void)registered;
  std::list<WireThread> done;
  WireThread* entry;
  {
    std::lock_guard<std::mutex> lock(registry.mutex);
    done = TakeFinished(registry);
    registry.threads.emplace_back();
    entry = &registry.threads.back();
    entry->stop = std::move(stop);
  }
  JoinAll(&done);
  // Started without the lock (a system call); the entry counts as finished only once it
  // holds its thread.
  std::thread thread([&registry, entry, body = std::move(body)]() mutable {
    body();
    body = nullptr;  // what it holds goes now, on this thread
    std::lock_guard<std::mutex> lock(registry.mutex);
    entry->finished = true;
    registry.finished.notify_all();
  });
  std::lock_guard<std::mutex> lock(registry.mutex);
  entry->thread = std::move(thread);
  registry.finished.notify_all();
}

int WireThreadCount() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return static_cast<int>(registry.threads.size());
}

}  // namespace rpma_sim
