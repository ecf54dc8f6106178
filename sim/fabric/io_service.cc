// io_service.cc -- the process-wide Boost.Asio io_context (never destroyed).
#include "sim/fabric/io_service.h"

namespace rpma_sim {

boost::asio::io_context& IoContext() {
  static boost::asio::io_context* context = new boost::asio::io_context();
  return *context;
}

}  // namespace rpma_sim
