// tcp_session.h -- one connection's TCP wire as the connection manager and the queue pair
// see it: routes arriving frames (CM messages to the CM id, work requests and outcomes to
// the queue pair) and sends the CM messages of its id.
//
// A server-side session starts without an id: its first frame must be a HELLO, which makes
// it an incoming connection request on its listener.
#ifndef RPMA_SIM_CM_TCP_SESSION_H_
#define RPMA_SIM_CM_TCP_SESSION_H_

#include <memory>
#include <vector>

#include "sim/transport/tcp_wire.h"
#include "sim/verbs/queue_pair.h"
#include "sim/verbs/wire_link.h"

namespace rpma_sim {

class CmId;
class Listener;

class TcpSession : public WireHandler, public std::enable_shared_from_this<TcpSession> {
 public:
  // A client's session (its id binds itself), or a server's, waiting for HELLO.
  TcpSession(std::shared_ptr<TcpWire> wire, std::weak_ptr<Listener> listener);

  void BindId(const std::shared_ptr<CmId>& id);
  // Work requests arriving on the wire go to `qp`; its own go out through link().
  void BindQueuePair(const std::shared_ptr<QueuePair>& qp);
  const std::shared_ptr<WireLink>& link() const { return link_; }

  // CM messages to the peer (queued; never blocks).
  void Send(FrameType type, std::vector<uint8_t> body = {});
  // Sends what is queued, then closes the wire.
  void Close();
  // Waits until what is queued was sent (see TcpWire::Flush). Not under the CM lock.
  void Flush() { wire_->Flush(kFlushTimeoutMs); }
  static constexpr int kFlushTimeoutMs = 2000;
  const std::string& peer() const { return wire_->peer(); }

  // WireHandler (the wire's reader thread).
  void OnFrame(Frame frame) override;
  void OnWireClosed(const std::string& reason) override;

 private:
  void OnHello(Frame frame);
  void OnDataFrame(const Frame& frame);
  void Malformed(const std::string& what);

  std::shared_ptr<TcpWire> wire_;
  std::shared_ptr<WireLink> link_;
  std::weak_ptr<Listener> listener_;
  std::weak_ptr<CmId> id_;        // guarded by the CM lock
  std::weak_ptr<QueuePair> qp_;   // guarded by the execution lock
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_TCP_SESSION_H_
