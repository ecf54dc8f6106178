// wire_connection.h -- one connection to a peer process, as the connection manager sees it:
// the handshake (HELLO, then ACCEPT or REJECT), the other CM messages to and from its id
// (REJECT, DISCONNECT: the id's WireCmPeer sends, this object receives), and the end of
// the connection. Work requests and their outcomes go from the wire straight to the link
// (verbs/wire_link.h, through a FrameRouter), not through here.
//
// Every connection starts on a TCP wire. A server's starts without an id: its first frame
// must be a HELLO, which makes it an incoming connection request on its listener. When the
// HELLO offers a shared-memory segment the server can open, the data path moves there at
// ACCEPT (shm_switch.h); the TCP wire stays to watch the peer and carry DOORBELL frames.
#ifndef RPMA_SIM_CM_WIRE_CONNECTION_H_
#define RPMA_SIM_CM_WIRE_CONNECTION_H_

#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <vector>

#include "sim/cm/cm_lock.h"
#include "sim/cm/connect_messages.h"
#include "sim/cm/shm_switch.h"
#include "sim/common/mutex.h"
#include "sim/transport/frame_router.h"
#include "sim/transport/frame_wire.h"
#include "sim/transport/shm_segment.h"
#include "sim/verbs/queue_pair.h"
#include "sim/verbs/wire_link.h"

namespace rpma_sim {

class CmId;
class Listener;

class WireConnection : public WireHandler, public std::enable_shared_from_this<WireConnection> {
 public:
  // A client's connection (its id binds itself), or a server's, waiting for HELLO.
  WireConnection(std::shared_ptr<FrameWire> wire, std::weak_ptr<Listener> listener);

  // Starts reading the TCP wire: the connection manager's frames come here, the data
  // path's go to link() (FrameRouter). Not under the simulator's locks (FrameWire::Start).
  void Start();
  void BindId(const std::shared_ptr<CmId>& id);
  // Work requests arriving on the wire go to `qp` (through link()); its own go out there.
  void BindQueuePair(const std::shared_ptr<QueuePair>& qp) { link_->BindQueuePair(qp); }
  const std::shared_ptr<WireLink>& link() const { return link_; }

  // Client: the connect request, offering `segment` (may be null) for the data path.
  // `node` is the client's (fabric/node.h).
  void SendHello(std::vector<uint8_t> private_data, std::shared_ptr<ShmSegment> segment,
                 bool required, uint64_t node);
  // Server: accepts; the data path moves to the offered segment if it was taken, and the
  // wire over it is returned (null otherwise) for the caller to start (StartReading) once
  // it holds no lock. `node` is the server's.
  std::shared_ptr<FrameWire> SendAccept(std::vector<uint8_t> private_data, uint64_t node);
  // Begins reading `shm_wire` (from SendAccept) on the calling thread, which holds none of
  // the simulator's locks: the engine is not woken for it.
  void StartReading(const std::shared_ptr<FrameWire>& shm_wire);
  // Other CM messages to the peer (queued; never blocks).
  void Send(FrameType type, std::vector<uint8_t> body = {});
  // Sends what is queued, then closes the connection.
  void Close();
  // Closes both wires at once, dropping what is queued: the peer sees the connection end.
  void Abort();
  // Waits until what is queued was sent (see FrameWire::Flush). Not under the CM lock.
  void Flush();
  static constexpr int kFlushTimeoutMs = 2000;
  // How long a server's session waits for the client's HELLO before it closes.
  static constexpr int kHelloTimeoutMs = 5000;
  // How long a client's session waits for the answer to its HELLO before it closes.
  static constexpr int kAnswerTimeoutMs = 5000;
  const std::string& peer() const { return wire_->peer(); }
  // The wire over the segment once the data path moved there; null before (or never).
  std::shared_ptr<FrameWire> shm_wire() { return shm_.wire(); }
  // See ByteStream::WatchLiveness: the TCP connection watches the peer on both transports.
  void WatchLiveness(int timeout_ms) { wire_->stream()->WatchLiveness(timeout_ms); }

  // WireHandler (the progress engine's thread, reading the TCP wire).
  void OnFrame(Frame frame) override;
  void OnWireClosed(const std::string& reason) override;

 private:
  class SharedMemoryHandler;

  void OnHello(Frame frame);
  void OnAccept(Frame frame);
  void Malformed(const std::string& what);
  // The peer wrote to (or read from) the rings while this side slept on them.
  void OnDoorbell(const Frame& frame);
  // Sends every later frame through `segment`; returns the wire that reads it.
  // From then on a data frame on TCP is malformed.
  std::shared_ptr<FrameWire> MoveToSharedMemory(std::shared_ptr<ShmSegment> segment) {
    if (std::shared_ptr<FrameRouter> router = tcp_router_.lock()) router->DataMoved();
    return shm_.MoveTo(std::move(segment), wire_, link_);
  }
  // What handles the frames of the wire over the segment.
  std::shared_ptr<WireHandler> SharedMemoryRouter();
  // The connection is over (the TCP wire ended, or the shared-memory one did).
  void Ended(const std::string& reason);
  // The HELLO (a server's) or its answer (a client's) came, or the connection ended: the
  // timer stops (Start).
  void StopHandshakeTimer();

  std::shared_ptr<FrameWire> wire_;  // TCP
  std::shared_ptr<WireLink> link_;
  // wire_'s handler (which holds this): set by Start, before any frame is read.
  std::weak_ptr<FrameRouter> tcp_router_;
  std::weak_ptr<Listener> listener_;
  // A server's session takes HELLO; a client's takes one ACCEPT or REJECT. Anything else is
  // a peer that lies, and ends the connection.
  const bool server_;
  // Until the HELLO or its answer, or the end: set by Start, before any frame is read.
  std::shared_ptr<boost::asio::steady_timer> handshake_timer_;
  std::weak_ptr<CmId> id_ GUARDED_BY(CmMutex());

  ShmSwitch shm_;
  // The handshake so far: a peer that sends its part twice lies.
  Mutex mutex_ ACQUIRED_AFTER(CmMutex());
  bool answered_ GUARDED_BY(mutex_) = false;    // a client's: its ACCEPT or REJECT came
  bool hello_seen_ GUARDED_BY(mutex_) = false;  // a server's: its HELLO came
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_WIRE_CONNECTION_H_
