// socket_stream.cc -- connecting, reading and writing a TCP socket.
#include "sim/transport/socket_stream.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "sim/common/log.h"
#include "sim/fabric/io_service.h"

namespace rpma_sim {
namespace {

boost::asio::ip::tcp::endpoint ToEndpoint(const SocketAddress& address) {
  boost::asio::ip::tcp::endpoint endpoint;
  endpoint.resize(address.length);
  memcpy(endpoint.data(), &address.storage, address.length);
  return endpoint;
}

}  // namespace

Status SocketStream::Connect(const SocketAddress& address, bool* refused,
                             std::unique_ptr<SocketStream>* stream) {
  boost::asio::ip::tcp::socket socket(IoContext());
  boost::system::error_code error;
  socket.connect(ToEndpoint(address), error);
  if (error) {
    *refused = error == boost::asio::error::connection_refused;
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

bool SocketStream::ReadExactly(uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::recv(fd_, data, size, 0);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

ssize_t SocketStream::Write(const iovec* parts, int count, bool dont_wait) {
  for (;;) {
    msghdr message{};
    message.msg_iov = const_cast<iovec*>(parts);
    message.msg_iovlen = count;
    ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL | (dont_wait ? MSG_DONTWAIT : 0));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && dont_wait && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    return n <= 0 ? -1 : n;
  }
}

void SocketStream::Shutdown() { ::shutdown(fd_, SHUT_RDWR); }

size_t SocketStream::Available() {
  int bytes = 0;
  return ioctl(fd_, FIONREAD, &bytes) == 0 && bytes > 0 ? static_cast<size_t>(bytes) : 0;
}

bool SocketStream::Peek(uint8_t* data, size_t size) {
  return ::recv(fd_, data, size, MSG_PEEK | MSG_DONTWAIT) == static_cast<ssize_t>(size);
}

bool SocketStream::Ended() {
  pollfd watch{fd_, POLLRDHUP, 0};
  return ::poll(&watch, 1, 0) == 1 && (watch.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool SocketStream::WaitReadable() {
  for (;;) {
    pollfd watch{fd_, POLLIN | POLLRDHUP, 0};
    int ready = ::poll(&watch, 1, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return false;
    if (Available() > 0) return true;
    // Nothing to read: either the end (or an error) is what there is, or a polling
    // application took the bytes meanwhile.
    if (Ended()) return false;
  }
}

}  // namespace rpma_sim
