// io_service.cc -- the process-wide Boost.Asio io_context (never destroyed).
#include "sim/fabric/io_service.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/steady_timer.hpp>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

namespace rpma_sim {

// Keeps the progress engine's run() going until the process exits. Globals with external
// linkage, so they stay roots that leak checkers see.
using ProgressGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
ProgressGuard* g_progress_guard = nullptr;
std::thread* g_progress_thread = nullptr;
pid_t g_progress_owner = 0;

namespace {

// Runs at exit, before the statics Asio's thread uses are destroyed (they were constructed
// before this was registered): the engine's thread must not be inside run() by then.
void StopProgressEngine() {
  if (getpid() != g_progress_owner) return;  // a fork child: the thread is the parent's
  IoContext().stop();
  if (g_progress_thread->joinable()) g_progress_thread->join();
}

}  // namespace

boost::asio::io_context& IoContext() {
  static boost::asio::io_context* context = new boost::asio::io_context();
  return *context;
}

bool EnsureReactor(std::string* error) {
  static std::atomic<bool> made{false};
  if (made.load(std::memory_order_acquire)) return true;
  try {
    boost::asio::steady_timer first(IoContext());  // a timer's service needs the reactor
  } catch (const boost::system::system_error& failure) {
    *error = failure.what();
    return false;
  }
  made.store(true, std::memory_order_release);
  return true;
}

void EnsureProgressEngine() {
  static const bool started = [] {
    g_progress_guard = new ProgressGuard(IoContext().get_executor());
    g_progress_thread = new std::thread([] { IoContext().run(); });
    g_progress_owner = getpid();
    atexit(StopProgressEngine);
    return true;
  }();
  (void)started;
}

void RunAt(std::chrono::steady_clock::time_point deadline, std::function<void()> task) {
  EnsureProgressEngine();
  auto timer = std::make_shared<boost::asio::steady_timer>(IoContext(), deadline);
  timer->async_wait(
      [timer, task = std::move(task)](const boost::system::error_code&) { task(); });
}

}  // namespace rpma_sim
