// io_service.cc -- the process's Boost.Asio io_context and the progress engine's thread, one
// of each per process (a fork child gets its own: per_process.h). Never destroyed.
#include "sim/fabric/io_service.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <stdlib.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "sim/common/per_process.h"

namespace rpma_sim {
namespace {

// Keeps the progress engine's run() going until the process exits.
using ProgressGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

// One process's engine. A child's io_context is new: the parent's epoll instance is shared
// with the parent (an epoll fd copied by fork refers to the same one), so the child never
// registers anything with it.
struct Engine {
  boost::asio::io_context context;
  std::atomic<bool> reactor_made{false};
  std::once_flag started;
  std::unique_ptr<ProgressGuard> guard;
  std::unique_ptr<std::thread> thread;  // set once, by the call_once of `started`
};

// A global: what it holds stays reachable for leak checkers.
PerProcess<Engine> g_engine;

// Runs at exit, before the statics Asio's thread uses are destroyed (they were constructed
// before this was registered): the engine's thread must not be inside run() by then. A
// fork child inherits its parent's registration and may add its own: each stops the
// engine of the process it runs in, if that one started it.
void StopProgressEngine() {
  Engine& engine = g_engine.Get();
  if (!engine.thread || !engine.thread->joinable()) return;
  engine.context.stop();
  engine.thread->join();
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
    engine.thread.reset(new std::thread([&engine] { engine.context.run(); }));
    atexit(StopProgressEngine);
  });
}

void RunAt(std::chrono::steady_clock::time_point deadline, std::function<void()> task) {
  EnsureProgressEngine();
  auto timer = std::make_shared<boost::asio::steady_timer>(IoContext(), deadline);
  timer->async_wait(
      [timer, task = std::move(task)](const boost::system::error_code&) { task(); });
}

}  // namespace rpma_sim
