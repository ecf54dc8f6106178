// tcp_wire.cc -- connecting, the reader and writer threads, and closing a wire.
#include "sim/transport/tcp_wire.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <chrono>
#include <thread>

#include "sim/common/log.h"
#include "sim/fabric/io_service.h"

namespace rpma_sim {
namespace {

// Bodies are read in pieces of at most this size, so a peer that announces a large frame
// must really send it before the memory is taken.
constexpr size_t kReadChunk = 4 << 20;

boost::asio::ip::tcp::endpoint ToEndpoint(const SocketAddress& address) {
  boost::asio::ip::tcp::endpoint endpoint;
  endpoint.resize(address.length);
  memcpy(endpoint.data(), &address.storage, address.length);
  return endpoint;
}

}  // namespace

Status TcpWire::Connect(const SocketAddress& address, bool* refused,
                        std::shared_ptr<TcpWire>* wire) {
  boost::asio::ip::tcp::socket socket(IoContext());
  boost::system::error_code error;
  socket.connect(ToEndpoint(address), error);
  if (error) {
    *refused = error == boost::asio::error::connection_refused;
    SIM_LOG_INFO("connect to %s: %s", address.ToString().c_str(), error.message().c_str());
    return Status::kProvider;
  }
  *wire = std::make_shared<TcpWire>(std::move(socket));
  return Status::kOk;
}

TcpWire::TcpWire(boost::asio::ip::tcp::socket socket)
    : socket_(std::move(socket)), fd_(socket_.native_handle()) {
  boost::system::error_code error;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), error);
  auto remote = socket_.remote_endpoint(error);
  peer_ = error ? "?" : remote.address().to_string() + ":" + std::to_string(remote.port());
}

TcpWire::~TcpWire() {
  boost::system::error_code ignored;
  socket_.close(ignored);
}

void TcpWire::Start(std::shared_ptr<WireHandler> handler) {
  auto self = shared_from_this();
  std::thread([self, handler]() mutable { self->ReadLoop(std::move(handler)); }).detach();
  std::thread([self] { self->WriteLoop(); }).detach();
}

bool TcpWire::Send(FrameType type, std::vector<uint8_t> body) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closing_) return false;
  Outgoing out{Frame{type, std::move(body)}, 0};
  if (outbound_.empty() && !writing_) {
    // Nothing ahead of it: send right here without waiting (no thread hop); whatever the
    // socket does not take now goes to the writer thread.
    if (!WriteFrame(&out, MSG_DONTWAIT)) return false;
    if (out.sent == kFrameHeaderSize + out.frame.body.size()) return true;
  }
  outbound_.push_back(std::move(out));
  wake_writer_.notify_one();
  return true;
}

void TcpWire::Close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closing_ = true;
  wake_writer_.notify_one();
}

void TcpWire::Abort() {
  aborted_ = true;
  Close();
  ::shutdown(fd_, SHUT_RDWR);
}

bool TcpWire::ReadExactly(uint8_t* data, size_t size) {
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

void TcpWire::ReadLoop(std::shared_ptr<WireHandler> handler) {
  std::string reason;
  for (;;) {
    uint8_t header[kFrameHeaderSize];
    if (!ReadExactly(header, sizeof(header))) {
      reason = "the connection ended";
      break;
    }
    Frame frame;
    uint32_t length = 0;
    if (!DecodeFrameHeader(header, &frame.type, &length, &reason)) {
      SIM_LOG_ERROR("malformed frame from %s: %s; closing the connection", peer_.c_str(),
                    reason.c_str());
      reason = "malformed frame: " + reason;
      break;
    }
    bool complete = true;
    while (frame.body.size() < length && complete) {
      size_t start = frame.body.size();
      size_t piece = std::min<size_t>(kReadChunk, length - start);
      frame.body.resize(start + piece);
      complete = ReadExactly(frame.body.data() + start, piece);
    }
    if (!complete) {
      reason = "the connection ended inside a frame";
      break;
    }
    handler->OnFrame(std::move(frame));
  }
  Abort();  // stop the writer too
  handler->OnWireClosed(reason);
}

bool TcpWire::WriteFrame(Outgoing* out, int flags) {
  const Frame& frame = out->frame;
  uint8_t header[kFrameHeaderSize];
  EncodeFrameHeader(frame.type, static_cast<uint32_t>(frame.body.size()), header);
  iovec parts[2] = {{header, sizeof(header)},
                    {const_cast<uint8_t*>(frame.body.data()), frame.body.size()}};
  size_t total = sizeof(header) + frame.body.size();
  size_t& sent = out->sent;
  while (sent < total) {
    msghdr message{};
    iovec remaining[2];
    int count = 0;
    size_t skip = sent;
    for (const iovec& part : parts) {
      if (skip >= part.iov_len) {
        skip -= part.iov_len;
        continue;
      }
      remaining[count].iov_base = static_cast<uint8_t*>(part.iov_base) + skip;
      remaining[count].iov_len = part.iov_len - skip;
      skip = 0;
      ++count;
    }
    message.msg_iov = remaining;
    message.msg_iovlen = count;
    ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL | flags);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (flags & MSG_DONTWAIT) && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void TcpWire::WriteLoop() {
  for (;;) {
    Outgoing out;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      writing_ = false;
      drained_.notify_all();
      wake_writer_.wait(lock, [this] { return closing_ || !outbound_.empty(); });
      if (outbound_.empty() || aborted_) break;  // closing, and everything was sent
      out = std::move(outbound_.front());
      outbound_.pop_front();
      writing_ = true;
    }
    if (!WriteFrame(&out, 0)) break;
  }
  ::shutdown(fd_, SHUT_RDWR);  // the reader sees the end and tells the handler
  std::lock_guard<std::mutex> lock(mutex_);
  writer_done_ = true;
  drained_.notify_all();
}

void TcpWire::Flush(int timeout_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                    [this] { return writer_done_ || (outbound_.empty() && !writing_); });
}

}  // namespace rpma_sim
