// listener.cc -- binding the TCP listener and the in-process listener registry.
#include "sim/cm/listener.h"
#include "sim/common/mutex.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <future>
#include <vector>

#include "sim/cm/cm_id.h"
#include "sim/cm/cm_lock.h"
#include "sim/cm/wire_connection.h"
#include "sim/common/fork_generation.h"
#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/fabric/io_service.h"
#include "sim/transport/frame.h"
#include "sim/transport/socket_stream.h"

namespace rpma_sim {
namespace {

// Live listeners of this process (a fork child's are its own).
std::vector<std::weak_ptr<Listener>>& Registry() REQUIRES(CmMutex()) {
  static PerProcess<std::vector<std::weak_ptr<Listener>>> registry;
  return registry.Get();
}

// After an accept failed for want of resources and no request could be refused, the
// engine tries again this much later.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(10);

bool OutOfResources(const boost::system::error_code& error) {
  int code = error.value();
  return error.category() == boost::system::system_category() &&
         (code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM);
}

// Takes the next connection waiting in the listening socket's backlog and turns it down: a
// REJECT before anything else, then the end, so that the client reads RPMA_CONN_REJECTED
// (not the reset that closing the listener with it still waiting would give). False if none
// was waiting.
bool RejectWaitingConnection(int listening_fd) {
  int fd = accept4(listening_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return false;
  uint8_t reject[kFrameHeaderSize];
  EncodeFrameHeader(FrameType::kReject, 0, reject);
  (void)send(fd, reject, sizeof(reject), MSG_DONTWAIT | MSG_NOSIGNAL);
  shutdown(fd, SHUT_WR);
  uint8_t unread[256];  // its HELLO, so that closing sends a FIN, not a reset
  while (recv(fd, unread, sizeof(unread), MSG_DONTWAIT) > 0) {
  }
  close(fd);
  return true;
}

}  // namespace

Listener::Listener(const SocketAddress& address)
    : address_(address),
      acceptor_(IoContext()),
      spare_fd_(open("/dev/null", O_RDONLY | O_CLOEXEC)) {}

// The owner calls Shutdown() first; otherwise the acceptor closes itself.
Listener::~Listener() {
  if (acceptor_.is_open()) {
    CloseOnForkSection section;
    ForgetCloseOnFork(acceptor_.native_handle());
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }
  if (spare_fd_ >= 0) close(spare_fd_);
}

Status Listener::Listen(const SocketAddress& address, const std::shared_ptr<Node>& node,
                        std::shared_ptr<Listener>* out) {
  std::string no_reactor;
  if (!EnsureReactor(&no_reactor)) {
    SIM_LOG_ERROR("listen on %s: %s", address.ToString().c_str(), no_reactor.c_str());
    return Status::kProvider;
  }
  std::shared_ptr<Listener> listener(new Listener(address));
  boost::system::error_code error;
  boost::asio::ip::tcp::endpoint endpoint = ToEndpoint(address);
  // Close-on-exec from its creation, as every fd of librdmacm (Boost.Asio's open() makes
  // the socket without it): a program the application starts (posix_spawn, system(),
  // popen(), which run no fork handlers) must not keep the port listening.
  int fd;
  {
    // A fork child closes its copy (marked at once, so also from a fork while this binds):
    // the port stays the parent's, and is free when it shuts the endpoint down. Unmarked
    // again by the destructor if what follows fails.
    CloseOnForkSection section;
    fd = socket(endpoint.protocol().family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) MarkCloseOnFork(fd);
  }
  if (fd < 0) {
    error.assign(errno, boost::system::system_category());
  } else {
    listener->acceptor_.assign(endpoint.protocol(), fd, error);
    if (error) {
      CloseOnForkSection section;
      ForgetCloseOnFork(fd);
      close(fd);
    }
  }
  if (!error) listener->acceptor_.set_option(boost::asio::socket_base::reuse_address(true), error);
  if (!error) listener->acceptor_.bind(endpoint, error);
  if (!error) listener->acceptor_.listen(boost::asio::socket_base::max_listen_connections, error);
  // AcceptOne's accept4 must not wait: another process may take the connection first.
  if (!error) listener->acceptor_.non_blocking(true, error);
  if (error) {
    SIM_LOG_ERROR("listen on %s: %s", address.ToString().c_str(), error.message().c_str());
    return Status::kProvider;
  }
  {
    MutexLock lock(&CmMutex());
    Registry().push_back(listener);
  }
  listener->node_ = node;
  node->Join(listener);
  EnsureProgressEngine();
  listener->AcceptNext();
  *out = std::move(listener);
  return Status::kOk;
}

void Listener::AcceptNext() {
  // Waits for a connection and accepts it in the handler (AcceptOne), not with async_accept:
  // Asio may accept ahead of its handler, and a fork that parked the engine in between
  // would leave the child the connection's fd, not yet marked close-on-fork.
  auto self = shared_from_this();
  acceptor_.async_wait(
      boost::asio::socket_base::wait_read,
      [self](const boost::system::error_code& error) { self->OnAcceptable(error); });
}

void Listener::OnAcceptable(boost::system::error_code error) {
  if (shut_down_) {
    accepting_ended_.set_value();
    return;
  }
  if (!error) error = AcceptOne();
  if (error) {
    SIM_LOG_WARNING("accept on %s: %s", address_.ToString().c_str(), error.message().c_str());
    if (OutOfResources(error) && !RefuseOneRequest()) {
      // Not even the spare fd helped: try again a little later instead of spinning.
      auto self = shared_from_this();
      auto timer = std::make_shared<boost::asio::steady_timer>(IoContext(), kAcceptBackoff);
      timer->async_wait([self, timer](const boost::system::error_code&) { self->AcceptNext(); });
      return;
    }
  }
  AcceptNext();
}

boost::system::error_code Listener::AcceptOne() {
  int fd;
  {
    CloseOnForkSection section;  // a fork child must not keep the connection
    fd = accept4(acceptor_.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) MarkCloseOnFork(fd);
  }
  if (fd < 0) {
    // Nothing to accept after all (the client gave up, or another process took it).
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED || errno == EINTR)
      return {};
    return boost::system::error_code(errno, boost::system::system_category());
  }
  boost::asio::ip::tcp::socket socket(IoContext());
  boost::system::error_code error;
  socket.assign(ToEndpoint(address_).protocol(), fd, error);
  if (error) {
    CloseOnForkSection section;
    ForgetCloseOnFork(fd);
    if (!socket.is_open()) ::close(fd);  // an open socket closes it itself
    return error;
  }
  auto wire = std::make_shared<FrameWire>(std::make_unique<SocketStream>(std::move(socket)));
  std::make_shared<WireConnection>(wire, shared_from_this())->Start();
  return {};
}

bool Listener::RefuseOneRequest() {
  if (spare_fd_ >= 0) close(spare_fd_);
  const bool refused = RejectWaitingConnection(acceptor_.native_handle());
  if (refused) {
    SIM_LOG_WARNING("accept on %s: out of file descriptors: a connection request was rejected",
                    address_.ToString().c_str());
  }
  spare_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  return refused;
}

void Listener::OnNodeFailed() {
  for (CmEvent& event : channel_.TakeAll())
    if (event.id) event.id->AbortRequest();
  // Node::Fail lets its members go: a later failure of the node ends later requests too.
  if (std::shared_ptr<Node> node = node_.lock()) node->Join(shared_from_this());
}

void Listener::Shutdown() {
  std::deque<CmEvent> pending;
  {
    MutexLock lock(&CmMutex());
    if (shut_down_.exchange(true)) return;
    auto& registry = Registry();
    registry.erase(std::remove_if(registry.begin(), registry.end(),
                                  [this](const std::weak_ptr<Listener>& entry) {
                                    auto live = entry.lock();
                                    return !live || live.get() == this;
                                  }),
                   registry.end());
  }
  // With shut_down_ set under the CM lock nothing delivers here any more: what is pending
  // is taken without the lock (draining the channel's fd is a system call).
  pending = channel_.TakeAll();
  // The acceptor belongs to the progress engine's thread: close it there, and wait, so that
  // the port is free again when this returns.
  std::promise<void> closed;
  auto self = shared_from_this();
  boost::asio::post(IoContext(), [self, &closed] {
    // Nobody listens any more: what waits in the backlog is rejected, as rdma_cm rejects
    // the requests of a listener it destroys.
    while (RejectWaitingConnection(self->acceptor_.native_handle())) {
    }
    boost::system::error_code ignored;
    CloseOnForkSection section;
    ForgetCloseOnFork(self->acceptor_.native_handle());
    self->acceptor_.close(ignored);
    closed.set_value();
  });
  closed.get_future().wait();
  // The accept the close aborted still holds the listener: let its handler end the chain,
  // so that nothing of the listener is left queued on the engine.
  accepting_ended_.get_future().wait();
  for (CmEvent& event : pending)
    if (event.id) event.id->Reject();
}

std::shared_ptr<Listener> Listener::FindLocked(const SocketAddress& destination) {
  for (const auto& entry : Registry()) {
    std::shared_ptr<Listener> listener = entry.lock();
    if (!listener || listener->shut_down_) continue;
    const SocketAddress& bound = listener->address_;
    if (bound.SameHostAndPort(destination)) return listener;
    if (bound.IsWildcard() && bound.port() == destination.port() && HostOwnsAddress(destination))
      return listener;
  }
  return nullptr;
}

void Listener::DeliverLocked(CmEvent event) { channel_.Push(std::move(event)); }

bool Listener::BacklogFullLocked() {
  if (channel_.pending() < kBacklog) return false;
  SIM_LOG_WARNING("%zu connection requests wait on %s already (the backlog): rejected", kBacklog,
                  address_.ToString().c_str());
  return true;
}

}  // namespace rpma_sim
