// socket_stream.cc -- connecting, reading and writing a TCP socket.
#include "sim/transport/socket_stream.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include <algorithm>

#include "sim/common/log.h"
#include "sim/fabric/io_service.h"

namespace rpma_sim {

boost::asio::ip::tcp::endpoint ToEndpoint(const SocketAddress& address) {
  boost::asio::ip::tcp::endpoint endpoint;
  endpoint.resize(address.length);
  memcpy(endpoint.data(), &address.storage, address.length);
  return endpoint;
}

Status SocketStream::Connect(const SocketAddress& address, int timeout_ms,
                             ConnectFailure* failure, std::unique_ptr<SocketStream>* stream) {
  boost::asio::ip::tcp::endpoint endpoint = ToEndpoint(address);
  boost::asio::ip::tcp::socket socket(IoContext());
  boost::system::error_code error;
  socket.open(endpoint.protocol(), error);
  if (error) {
    *failure = ConnectFailure::kLocal;
    SIM_LOG_ERROR("connect to %s: cannot make a socket: %s", address.ToString().c_str(),
                  error.message().c_str());
    return Status::kProvider;
  }
  // The native connect: Boost's synchronous one waits for the kernel however long it takes.
  if (!error) socket.native_non_blocking(true, error);
  if (!error && ::connect(socket.native_handle(), endpoint.data(), endpoint.size()) != 0)
    error = boost::system::error_code(errno, boost::system::system_category());
  if (error.value() == EINPROGRESS) {
    // The handshake is under way: wait for it at most timeout_ms (but 100 ms at least,
    // so that a timeout of 0 still lets a connection on this host complete).
    pollfd watch{socket.native_handle(), POLLOUT, 0};
    int ready;
    do {
      ready = ::poll(&watch, 1, std::max(timeout_ms, 100));
    } while (ready < 0 && errno == EINTR);
    int so_error = ETIMEDOUT;
    socklen_t length = sizeof(so_error);
    if (ready == 1)
      getsockopt(socket.native_handle(), SOL_SOCKET, SO_ERROR, &so_error, &length);
    error = boost::system::error_code(so_error, boost::system::system_category());
  }
  if (!error) socket.native_non_blocking(false, error);
  if (error) {
    *failure = error.value() == ECONNREFUSED ? ConnectFailure::kRefused
                                             : ConnectFailure::kUnreachable;
    SIM_LOG_INFO("connect to %s: %s", address.ToString().c_str(), error.message().c_str());
    return Status::kProvider;
  }
  stream->reset(new SocketStream(std::move(socket)));
  return Status::kOk;
}

SocketStream::SocketStream(boost::asio::ip::tcp::socket socket)
    : socket_(std::move(socket)), fd_(socket_.native_handle()) {
  boost::system::error_code error;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), error);
  auto remote = socket_.remote_endpoint(error);
  peer_ = error ? "?" : remote.address().to_string() + ":" + std::to_string(remote.port());
}

SocketStream::~SocketStream() {
  boost::system::error_code ignored;
  socket_.close(ignored);
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
  boost::system::error_code error, peer_error;
  auto local = socket_.local_endpoint(error);
  auto remote = socket_.remote_endpoint(peer_error);
  if (!error && !peer_error && local.address() == remote.address()) return;  // this host
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

void SocketStream::AsyncWaitReadable(std::function<void()> ready) {
  socket_.async_wait(boost::asio::ip::tcp::socket::wait_read,
                     [ready = std::move(ready)](const boost::system::error_code&) { ready(); });
}

void SocketStream::AsyncWaitWritable(std::function<void()> ready) {
  socket_.async_wait(boost::asio::ip::tcp::socket::wait_write,
                     [ready = std::move(ready)](const boost::system::error_code&) { ready(); });
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
