// io_service.h -- the process's Boost.Asio context, shared by everything that owns sockets.
//
// The progress engine of later transports runs it on a background thread; listeners only
// need it to own their acceptor sockets.
#ifndef RPMA_SIM_FABRIC_IO_SERVICE_H_
#define RPMA_SIM_FABRIC_IO_SERVICE_H_

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <string>

namespace rpma_sim {

boost::asio::io_context& IoContext();

// Makes the engine's reactor (its epoll, timer and wake-up fds) unless it exists. Asio makes
// it with the process's first socket or timer and throws when it cannot, so it is made
// before any of them: by rpma_peer_new (ProtectionDomain::Allocate), which everything that
// needs it comes after, and by the makers of sockets for callers below the API. False, with
// asio's reason in *error, when it cannot be made now.
bool EnsureReactor(std::string* error);

// Starts the progress engine's thread, which runs IoContext() for the rest of the process
// (idempotent). Everything asynchronous (accepting connections) runs on it.
void EnsureProgressEngine();

// Runs `task` once on the progress engine at `deadline` (started if need be). The engine
// keeps what `task` captures alive until then. The reactor exists (EnsureReactor): every
// caller acts for a connection or a work request, which came after a peer.
void RunAt(std::chrono::steady_clock::time_point deadline, std::function<void()> task);

// Runs `task` once on the progress engine as soon as it gets to it (started if need be), as
// RunAt does.
void RunSoon(std::function<void()> task);

}  // namespace rpma_sim

#endif  // RPMA_SIM_FABRIC_IO_SERVICE_H_
