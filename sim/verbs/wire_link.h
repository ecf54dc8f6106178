// wire_link.h -- work requests and their outcomes carried over a wire (TCP, or a
// shared-memory segment once the connection switched to one).
//
// The requester's end encodes each work request as a REQUEST frame (a write's or send's bytes
// travel with it); the responder's end answers with a RESPONSE frame (a read's bytes travel
// with it). Both ends of a connection use the same WireLink over their own wire. Its parts:
// the frames' codec (wire_codec.h), the requester's window and the responder's admission of
// its peer's requests (request_window.h) and what changes over shared memory (shm_mode.h),
// each guarding its own state.
#ifndef RPMA_SIM_VERBS_WIRE_LINK_H_
#define RPMA_SIM_VERBS_WIRE_LINK_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/transport/frame.h"
#include "sim/transport/frame_wire.h"
#include "sim/transport/shm_segment.h"
#include "sim/verbs/progress_source.h"
#include "sim/verbs/remote_link.h"
#include "sim/verbs/request_window.h"
#include "sim/verbs/shm_mode.h"

namespace rpma_sim {

class QueuePair;

// Also the data path's end of the wire: REQUEST and RESPONSE frames reach it straight from
// the wire (through a FrameRouter), not through the connection manager, and an application
// polling its completion queue takes arrived frames through it (ProgressSource). The calls
// of RemoteLink and ResponseSink come under the bound queue pair's execution lock, which
// keeps the frames of its requests and answers in order on the wire.
class WireLink : public RemoteLink,
                 public ResponseSink,
                 public WireHandler,
                 public ProgressSource,
                 public std::enable_shared_from_this<WireLink> {
 public:
  explicit WireLink(std::shared_ptr<FrameWire> wire) : wire_(wire.get()) {
    wires_.push_back(std::move(wire));
  }

  // Work requests arriving on the wire go to `qp`; polling its completion queues takes
  // the frames that arrived.
  void BindQueuePair(const std::shared_ptr<QueuePair>& qp);

  // WireHandler: a REQUEST, RESPONSE or PLACED frame (the wire's reader, or a polling
  // application). A malformed one ends the connection (the wire is aborted; the connection
  // manager hears of it as the wire's end).
  void OnFrame(Frame frame) override;
  void OnWireClosed(const std::string& reason) override {}

  // ProgressSource: takes what arrived on the wire the connection uses now, and sends what
  // waits to be sent on it.
  void Progress() override;
  // The application may sleep on its completion fd: what waits to execute with others
  // (ExecuteDirectlyLocked with kMayWait) runs on the engine's next turn.
  void OnArmed() override;

  // Queues any frame (connection management too) on the wire the connection uses now.
  bool SendFrame(FrameType type, std::vector<uint8_t> body);

  // From now on frames go through `wire`, which runs over `segment` (shm_mode.h).
  void UseSharedMemory(std::shared_ptr<FrameWire> wire, std::shared_ptr<ShmSegment> segment);

  // RemoteLink, the requester's end.
  void SubmitLocked(const SendRequest& request, uint64_t sequence) override;
  // A write or read straight to the peer's memory, when the connection runs over shared
  // memory and nothing submitted before it is still under way.
  // With kMayWait, a write or read that would copy through process_vm waits for others
  // (ShmMode::TryExecute), and the link's turn on the progress engine is asked for when the
  // first does.
  DirectExecution ExecuteDirectlyLocked(const SendRequest& request, uint64_t sequence,
                                        Batching batching) override;
  void RunDeferredLocked() override;
  // RunDeferredLocked under the bound queue pair's execution lock (the engine's turn, a
  // poll).
  void RunDeferred();
  void ConnectedLocked() override;
  // The peer may no longer reach this side's buffers (shared memory) nor its memory, what
  // it placed directly is told to the persistence model, and what waits is dropped.
  void RevokeLocked() override;

  // ResponseSink, the responder's end: encodes and queues a RESPONSE frame.
  void RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                     size_t length) override;
  void RespondWithBytesLocked(uint64_t sequence, const Outcome& outcome,
                              std::vector<uint8_t> read_data) override;

 private:
  FrameWire* wire() { return wire_.load(std::memory_order_acquire); }
  std::shared_ptr<QueuePair> qp();
  void Malformed(const std::string& what);

  void OnPlaced(const Frame& frame);
  void OnRequest(Frame frame);
  void OnResponse(const Frame& frame);
  // Asks for a turn of the engine that runs what ExecuteDirectlyLocked kept.
  void ScheduleDeferredRun();
  // The engine's turn kDeferredWait from now (one waits at a time).
  void ScheduleDeferredTurn();
  // Hands REQUEST frames to the wire, in order.
  void Send(EncodedRequest request);

  Mutex mutex_;
  std::weak_ptr<QueuePair> qp_ GUARDED_BY(mutex_);
  // The wire frames go out on: the first one, then the segment's (UseSharedMemory). Every
  // wire the link used is kept for its life, so that a frame's path reads the current one
  // with one load and no lock (the poller's and the engine's would meet on mutex_).
  std::vector<std::shared_ptr<FrameWire>> wires_ GUARDED_BY(mutex_);
  std::atomic<FrameWire*> wire_;
  RequestWindow window_;
  ResponderAdmission admission_;
  ShmMode shm_;
  std::atomic<bool> deferred_turn_waits_{false};  // ScheduleDeferredRun's timer is set
  // A request of the queue pair failed while the link ran what it kept (the queue pair went
  // to error and revoked the link, or one fails locally): what follows must not leave. Set
  // and read under the queue pair's execution lock; never cleared (the queue pair submits
  // nothing more here).
  bool stopped_ = false;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_WIRE_LINK_H_
