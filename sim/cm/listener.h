// listener.h -- a listening CM id: a real TCP listener plus the queue of connect requests.
//
// rpma_ep_listen binds a real TCP socket on addr:port, so a port in use fails exactly as it
// would for any server, and every later transport can start its handshake on that socket.
// Clients in this process find the listener through a registry keyed by address and port
// (a wildcard address matches every local address).
#ifndef RPMA_SIM_CM_LISTENER_H_
#define RPMA_SIM_CM_LISTENER_H_

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <future>
#include <memory>

#include "sim/cm/cm_lock.h"
#include "sim/cm/event_channel.h"
#include "sim/common/status.h"
#include "sim/fabric/address.h"
#include "sim/fabric/node.h"

namespace rpma_sim {

class Listener : public NodeMember, public std::enable_shared_from_this<Listener> {
 public:
  // Binds and listens on `address` for the peer that is `node`. kProvider if the bind or
  // listen fails.
  static Status Listen(const SocketAddress& address, const std::shared_ptr<Node>& node,
                       std::shared_ptr<Listener>* listener);

  ~Listener();

  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  EventChannel& channel() { return channel_; }
  const SocketAddress& address() const { return address_; }

  // Stops listening; requests not yet taken are rejected. The owner must call it before
  // dropping its reference (the destructor does not take the CM lock).
  void Shutdown();

  // The live listener for `destination`, or nullptr.
  static std::shared_ptr<Listener> FindLocked(const SocketAddress& destination) REQUIRES(CmMutex());

  // Queues a connect request.
  void DeliverLocked(CmEvent event) REQUIRES(CmMutex());

  // Whether kBacklog connect requests wait to be taken already (logged): a new one is then
  // rejected, as rdma_cm rejects past a listen backlog (librpma listens with backlog 0, the
  // kernel's default, net.rdma_ucm.max_backlog, 1024).
  bool BacklogFullLocked() REQUIRES(CmMutex());
  static constexpr size_t kBacklog = 1024;

  bool shut_down() const { return shut_down_; }

  // NodeMember: its node failed. The requests waiting here end unreachable, as every
  // connection of the node being set up does; it listens on (the peer stays usable).
  void OnNodeFailed() override;

 private:
  explicit Listener(const SocketAddress& address);

  // Accepts the next TCP connection on the progress engine; each becomes a session that
  // waits for its HELLO. The chain of accepts ends with the first handler that finds the
  // listener shut down, which sets accepting_ended_.
  void AcceptNext();
  // AcceptNext's wait ended (`error`, or a connection waits): accepts it, and waits again.
  void OnAcceptable(boost::system::error_code error);
  // Accepts one waiting connection (none may be left: not an error) and starts its session;
  // the fd is marked close-on-fork before anything else runs.
  boost::system::error_code AcceptOne();

  // Out of fds, so the next waiting connection cannot be accepted: with the fd kept spare
  // for this, takes it and answers REJECT, so the client neither waits for nothing nor
  // keeps the engine spinning on the same failure. False if even that failed.
  bool RefuseOneRequest();

  SocketAddress address_;
  std::weak_ptr<Node> node_;  // the peer's: joined again after each failure
  boost::asio::ip::tcp::acceptor acceptor_;
  EventChannel channel_;
  std::atomic<bool> shut_down_{false};
  int spare_fd_;  // /dev/null, given up for a moment by RefuseOneRequest (engine thread)
  std::promise<void> accepting_ended_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_LISTENER_H_
