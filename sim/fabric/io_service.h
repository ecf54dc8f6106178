// io_service.h -- the process's Boost.Asio context, shared by everything that owns sockets.
//
// The progress engine of later transports runs it on a background thread; listeners only
// need it to own their acceptor sockets.
#ifndef RPMA_SIM_FABRIC_IO_SERVICE_H_
#define RPMA_SIM_FABRIC_IO_SERVICE_H_

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>

namespace rpma_sim {

boost::asio::io_context& IoContext();

// Starts the progress engine's thread, which runs IoContext() for the rest of the process
// (idempotent). Everything asynchronous (accepting connections) runs on it.
void EnsureProgressEngine();

// Runs `task` once on the progress engine at `deadline` (started if need be). The engine
// keeps what `task` captures alive until then.
void RunAt(std::chrono::steady_clock::time_point deadline, std::function<void()> task);

}  // namespace rpma_sim

#endif  // RPMA_SIM_FABRIC_IO_SERVICE_H_
