// socket_stream.cc -- connecting, reading and writing a TCP socket.
#include "sim/transport/socket_stream.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <algorithm>

#include "sim/common/fork_generation.h"
#include "sim/common/log.h"
#include "sim/fabric/io_service.h"

namespace rpma_sim {

boost::asio::ip::tcp::endpoint ToEndpoint(const SocketAddress& address) {
  boost::asio::ip::tcp::endpoint endpoint;
  endpoint.resize(address.length);
  memcpy(endpoint.data(), &address.storage, address.length);
  return endpoint;
}

Status SocketStream::Connect(const SocketAddress& address, int timeout_ms, ConnectFailure* failure,
                             std::unique_ptr<SocketStream>* stream) {
  boost::asio::ip::tcp::endpoint endpoint = ToEndpoint(address);
  // Connected before the engine's reactor sees it: a socket not yet connected reports a
  // hang-up to epoll, which would wake the engine for nothing.
  int fd;
  {
    // Marked at once: a fork while the handshake is under way must not leave the child the
    // connection (it would keep it open after this process ended, and the peer never learn).
    CloseOnForkSection section;
    fd = ::socket(endpoint.protocol().family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                  IPPROTO_TCP);
    if (fd >= 0) MarkCloseOnFork(fd);
  }
  if (fd < 0) {
    *failure = ConnectFailure::kLocal;
    SIM_LOG_ERROR("connect to %s: cannot make a socket: %m", address.ToString().c_str());
    return Status::kProvider;
  }
  auto close_fd = [fd] {
    CloseOnForkSection section;
    ForgetCloseOnFork(fd);
    ::close(fd);
  };
  // The native connect: Boost's synchronous one waits for the kernel however long it takes.
  int error = ::connect(fd, endpoint.data(), endpoint.size()) == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    // The handshake is under way: wait for it at most timeout_ms (but 100 ms at least,
    // so that a timeout of 0 still lets a connection on this host complete).
    pollfd watch{fd, POLLOUT, 0};
    int ready;
    do {
      ready = ::poll(&watch, 1, std::max(timeout_ms, 100));
    } while (ready < 0 && errno == EINTR);
    error = ETIMEDOUT;
    socklen_t length = sizeof(error);
    if (ready == 1) getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
  }
  if (error != 0) {
    close_fd();
    *failure = error == ECONNREFUSED ? ConnectFailure::kRefused : ConnectFailure::kUnreachable;
    SIM_LOG_INFO("connect to %s: %s", address.ToString().c_str(), strerror(error));
    return Status::kProvider;
  }
  std::string no_reactor;
  if (!EnsureReactor(&no_reactor)) {
    close_fd();
    *failure = ConnectFailure::kLocal;
    SIM_LOG_ERROR("connect to %s: %s", address.ToString().c_str(), no_reactor.c_str());
    return Status::kProvider;
  }
  boost::asio::ip::tcp::socket socket(IoContext());
  boost::system::error_code assigned;
  socket.assign(endpoint.protocol(), fd, assigned);
  // It stays non-blocking: every read and write here is one (MSG_DONTWAIT), and the
  // engine's waits need it so.
  if (!assigned) socket.native_non_blocking(true, assigned);
  if (assigned) {
    CloseOnForkSection section;
    ForgetCloseOnFork(fd);
    if (!socket.is_open()) ::close(fd);  // an open socket closes it itself
    *failure = ConnectFailure::kLocal;
    SIM_LOG_ERROR("connect to %s: %s", address.ToString().c_str(), assigned.message().c_str());
    return Status::kProvider;
  }
  stream->reset(new SocketStream(std::move(socket)));
  return Status::kOk;
}

SocketStream::SocketStream(boost::asio::ip::tcp::socket socket)
    : socket_(std::move(socket)),
      fd_(socket_.native_handle()),
      protocol_(boost::asio::ip::tcp::v4()) {
  MarkCloseOnFork(fd_);  // the connection is this process's, not a fork child's
  boost::system::error_code error;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), error);
  auto remote = socket_.remote_endpoint(error);
  peer_ = error ? "?" : remote.address().to_string() + ":" + std::to_string(remote.port());
  boost::system::error_code local_error;
  auto local = socket_.local_endpoint(local_error);
  same_host_ = !error && !local_error && local.address() == remote.address();
  if (!local_error) protocol_ = local.protocol();
}

SocketStream::~SocketStream() {
  CloseOnForkSection section;
  ForgetCloseOnFork(fd_);
  boost::system::error_code ignored;
  if (watched_)
    socket_.close(ignored);
  else
    ::close(fd_);
}

ssize_t SocketStream::Write(const iovec* parts, int count) {
  for (;;) {
    msghdr message{};
    message.msg_iov = const_cast<iovec*>(parts);
    message.msg_iovlen = count;
    ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return n <= 0 ? -1 : n;
  }
}

void SocketStream::Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

void SocketStream::WatchLiveness(int timeout_ms) {
  if (same_host_) return;
  constexpr int kMinUserTimeoutMs = 5000;
  int on = 1, idle_s = 2, interval_s = 1, probes = 5;
  unsigned int user_timeout_ms =
      static_cast<unsigned int>(timeout_ms < kMinUserTimeoutMs ? kMinUserTimeoutMs : timeout_ms);
  setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
  setsockopt(fd_, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}

void SocketStream::Unwatch() {
  // A wait for room stays: releasing the socket would cancel it, and it would only begin
  // again (and watch the socket again) at once.
  if (!watched_ || waits_writable_) return;
  boost::system::error_code ignored;
  socket_.release(ignored);  // the fd stays open; nothing waits on it now
  watched_ = false;
}

void SocketStream::Watch() {
  if (watched_) return;
  boost::system::error_code error;
  socket_.assign(protocol_, fd_, error);
  if (!error) {
    watched_ = true;
    return;
  }
  // Nothing would wake the engine for this connection again: it ends, and the wait below
  // fails at once, so the reader finds the end (never a connection that hangs).
  SIM_LOG_ERROR("the progress engine cannot watch %s again: %s; closing the connection",
                peer_.c_str(), error.message().c_str());
  Shutdown();
}

void SocketStream::AsyncWaitReadable(std::function<void()> ready) {
  Watch();
  socket_.async_wait(boost::asio::ip::tcp::socket::wait_read,
                     [ready = std::move(ready)](const boost::system::error_code&) { ready(); });
}

void SocketStream::AsyncWaitWritable(std::function<void()> ready) {
  Watch();
  waits_writable_ = true;
  socket_.async_wait(boost::asio::ip::tcp::socket::wait_write,
                     [this, ready = std::move(ready)](const boost::system::error_code&) {
                       waits_writable_ = false;
                       ready();
                     });
}

ssize_t SocketStream::TryRead(uint8_t* data, size_t size) {
  for (;;) {
    ssize_t n = ::recv(fd_, data, size, MSG_DONTWAIT);
    if (n > 0) return n;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return -1;  // the end (0) or an error
  }
}

}  // namespace rpma_sim
