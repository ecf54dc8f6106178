// io_service.cc -- the process-wide Boost.Asio io_context (never destroyed).
#include "sim/fabric/io_service.h"

#include <boost/asio/executor_work_guard.hpp>
#include <thread>

namespace rpma_sim {

boost::asio::io_context& IoContext() {
  static boost::asio::io_context* context = new boost::asio::io_context();
  return *context;
}

void EnsureProgressEngine() {
  // Keeps run() going for as long as the process lives.
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  static Guard guard(IoContext().get_executor());
  static const bool started = [] {
    std::thread([] { IoContext().run(); }).detach();
    return true;
  }();
  (void)started;
}

}  // namespace rpma_sim
