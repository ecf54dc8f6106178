// socket_stream.h -- a ByteStream over a connected TCP socket.
//
// The progress engine waits for it (no thread of its own); an application polling its
// completions reads and writes it too, without a hop to the engine's thread
// (FrameWire::DeliverArrived, FrameWire::SendQueued).
#ifndef RPMA_SIM_TRANSPORT_SOCKET_STREAM_H_
#define RPMA_SIM_TRANSPORT_SOCKET_STREAM_H_

#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "sim/common/status.h"
#include "sim/fabric/address.h"
#include "sim/transport/byte_stream.h"

namespace rpma_sim {

// The Boost.Asio endpoint of `address`.
boost::asio::ip::tcp::endpoint ToEndpoint(const SocketAddress& address);

class SocketStream : public ByteStream {
 public:
  // Why a connect failed: nobody listened there (ECONNREFUSED), the host did not answer or
  // could not be reached, or this process could not make a socket (EMFILE, ENOBUFS, ...).
  enum class ConnectFailure { kNone, kRefused, kUnreachable, kLocal };

  // Connects to `address`, giving up after `timeout_ms` (at least 100 ms). On failure
  // *failure says why.
  static Status Connect(const SocketAddress& address, int timeout_ms, ConnectFailure* failure,
                        std::unique_ptr<SocketStream>* stream);

  explicit SocketStream(boost::asio::ip::tcp::socket socket);
  ~SocketStream() override;

  ssize_t Write(const iovec* parts, int count) override;
  void Shutdown() override;
  const std::string& peer() const override { return peer_; }
  // For a peer on another host: TCP keepalive probes after 2 s of silence, then every
  // second, and TCP_USER_TIMEOUT: the kernel ends the connection when the peer has not
  // answered for `timeout_ms`, but at least 5 s, so a few lost probes are survived. A peer
  // on this host (both ends have the same address) needs no watch: the kernel sends a FIN
  // or RST however its process ends; and probing there cost every idle connection a packet
  // a second, some of which a loaded machine's loopback dropped, and one lost probe reset
  // a healthy connection (tests/integration:scale_test under load).
  void WatchLiveness(int timeout_ms) override;
  void AsyncWaitReadable(std::function<void()> ready) override;
  void AsyncWaitWritable(std::function<void()> ready) override;
  ssize_t TryRead(uint8_t* data, size_t size) override;
  // The reactor forgets the socket (it is registered edge-triggered, so every segment that
  // arrives would wake the engine, waiting or not) until the next wait gives it back;
  // unless the engine waits for room to write.
  void Unwatch() override;
  // A recv(2) per frame's header and body would be two system calls per small frame.
  size_t ReadAheadBytes() const override { return 16 << 10; }
  bool WritesAreSystemCalls() const override { return true; }

 private:
  // Gives the socket back to the reactor if Unwatch took it (the engine's thread).
  void Watch();

  boost::asio::ip::tcp::socket socket_;
  int fd_;
  boost::asio::ip::tcp protocol_;
  bool watched_ = true;          // socket_ holds fd_ (else Unwatch released it; fd_ stays open)
  bool waits_writable_ = false;  // a wait for room is under way (the engine's thread)
  std::string peer_;
  bool same_host_ = false;  // both ends have one address: a peer of this host
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SOCKET_STREAM_H_
