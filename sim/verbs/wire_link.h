// wire_link.h -- work requests and their outcomes carried over a wire (TCP, or a
// shared-memory segment once the connection switched to one).
//
// The requester's end encodes each work request as a REQUEST frame (a write's or send's bytes
// travel with it); the responder's end answers with a RESPONSE frame (a read's bytes travel
// with it). Over shared memory, where the responder may reach the requester's memory
// (process_vm), a large payload stays where it is and the frame names its address instead.
// Both ends of a connection use the same WireLink over their own wire. The frame bodies are
// laid out in sim/transport/PROTOCOL.md.
#ifndef RPMA_SIM_VERBS_WIRE_LINK_H_
#define RPMA_SIM_VERBS_WIRE_LINK_H_

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/transport/frame.h"
#include "sim/transport/frame_wire.h"
#include "sim/transport/shm_segment.h"
#include "sim/verbs/direct_request.h"
#include "sim/verbs/direct_target.h"
#include "sim/verbs/execution_lock.h"
#include "sim/verbs/progress_source.h"
#include "sim/verbs/remote_link.h"

namespace rpma_sim {

class QueuePair;
class RegionPayload;

// Also the data path's end of the wire: REQUEST and RESPONSE frames reach it straight from
// the wire (through a FrameRouter), not through the connection manager, and an application
// polling its completion queue takes arrived frames through it (ProgressSource).
class WireLink : public RemoteLink,
                 public ResponseSink,
                 public WireHandler,
                 public ProgressSource,
                 public std::enable_shared_from_this<WireLink> {
 public:
  explicit WireLink(std::shared_ptr<FrameWire> wire) : wire_(std::move(wire)) {}
  ~WireLink() override;

  // Work requests arriving on the wire go to `qp`; polling its completion queues takes
  // the frames that arrived.
  void BindQueuePair(const std::shared_ptr<QueuePair>& qp);

  // WireHandler: a REQUEST or RESPONSE frame (the wire's reader, or a polling application).
  // A malformed one ends the connection (the wire is aborted; the connection manager hears
  // of it as the wire's end).
  void OnFrame(Frame frame) override;
  void OnWireClosed(const std::string& reason) override {}

  // ProgressSource: takes what arrived on the wire the connection uses now, and sends what
  // waits to be sent on it.
  void Progress() override;

  // Queues any frame (connection management too) on the wire the connection uses now.
  bool SendFrame(FrameType type, std::vector<uint8_t> body);

  // From now on frames go through `wire`, which runs over `segment`; writes and reads may
  // execute on the peer's memory directly (direct_request.h), and the peer's on this side's
  // (direct_target.h), once the queue pair is connected.
  void UseSharedMemory(std::shared_ptr<FrameWire> wire, std::shared_ptr<ShmSegment> segment);

  // The segment through which a REQUEST may name the requester's memory by address (when
  // this side can reach the peer's memory), or null: then such a request is malformed.
  std::shared_ptr<ShmSegment> ReferencePeer();

  // Requester: encodes and queues a REQUEST frame.
  void SubmitLocked(const SendRequest& request, uint64_t sequence) override;
  // Requester: a write or read straight to the peer's memory, when the connection runs
  // over shared memory and nothing submitted before it is still under way.
  bool ExecuteDirectlyLocked(const SendRequest& request, uint64_t sequence) override;
  void ConnectedLocked() override;
  // Requester: the peer may no longer reach this side's buffers (shared memory) nor its
  // memory, and what it placed directly is told to the persistence model.
  void RevokeLocked() override;

  // Responder: encodes and queues a RESPONSE frame.
  void RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                     size_t length) override;
  void RespondWithBytesLocked(uint64_t sequence, const Outcome& outcome,
                              std::vector<uint8_t> read_data) override;

  // The bytes a requester may have under way at its responder (PROTOCOL.md, "the
  // window"): what its REQUEST frames' bodies hold and what a read's RESPONSE carries back,
  // for the requests not answered yet. A request that does not fit waits in the requester
  // (as a NIC's send queue keeps its requests in the application's memory until the
  // responder can take them); one alone may exceed it. The responder holds a peer to it:
  // what the peer sent and this side did not answer yet is all this side keeps for it.
  static constexpr uint64_t kWindowBytes = 64 << 20;
  // What a request counts against the window: its frame's body of `body_size` bytes, and a
  // read's bytes unless they go straight to the requester's memory (`by_reference`).
  static uint64_t WindowBytes(size_t body_size, const SendRequest& request, bool by_reference);

  // Decodes a REQUEST body; a payload it carries stays in it (the request keeps the body),
  // one named by address is reached through `reference_peer` (see ReferencePeer). False
  // (with the reason) if it is malformed. *window_bytes (if not null): what it counts
  // against the window.
  static bool DecodeRequest(FrameBody body, std::shared_ptr<ShmSegment> reference_peer,
                            InboundRequest* inbound, std::string* error,
                            uint64_t* window_bytes = nullptr);

  // Decodes a RESPONSE body; *data points into the frame. False if it is malformed.
  static bool DecodeResponse(const Frame& frame, uint64_t* sequence, Outcome* outcome,
                             const uint8_t** data, size_t* length, std::string* error);

 private:
  std::shared_ptr<FrameWire> wire();
  // Whether `request`'s payload may stay in this process for the responder to fetch.
  bool ByReference(const SendRequest& request);
  void Malformed(const std::string& what);

  std::shared_ptr<QueuePair> qp();
  // A REQUEST encoded, and what it counts against the window.
  struct HeldRequest {
    uint64_t sequence;
    uint64_t window_bytes;
    std::vector<uint8_t> body;
    std::shared_ptr<RegionPayload> payload;  // the rest of the body, or null
  };
  // Requester: hands `request` to the wire.
  void SendRequestLocked(HeldRequest request) REQUIRES(execution_);
  // Requester: sends the requests that waited for the window, in order, while they fit.
  void SendHeldLocked() REQUIRES(execution_);
  // Responder: `sequence` and the ones before it are answered; returns the fields of its
  // RESPONSE body, with room for `length` bytes more.
  std::vector<uint8_t> AnswerLocked(uint64_t sequence, const Outcome& outcome, size_t length)
      REQUIRES(execution_);
  // Requester: request `sequence` was answered; so were those before it.
  void ForgetInPlaceLocked(uint64_t sequence) REQUIRES(execution_);
  // Responder: whether a request of `window_bytes` from the peer keeps to the window,
  // counting the answers among the `queued_bytes` the wire still holds for the peer.
  // Counts it if so.
  bool AdmitLocked(uint64_t sequence, uint64_t window_bytes, size_t queued_bytes,
                   std::string* error) REQUIRES(execution_);

  Mutex mutex_;
  std::weak_ptr<QueuePair> qp_ GUARDED_BY(mutex_);
  std::shared_ptr<FrameWire> wire_ GUARDED_BY(mutex_);
  std::shared_ptr<ShmSegment> segment_ GUARDED_BY(mutex_);
  std::shared_ptr<DirectTarget> direct_target_ GUARDED_BY(mutex_);
  bool connected_ GUARDED_BY(mutex_) = false;
  // The segment through which this side reaches the peer's memory directly, or null. Set
  // once (segment_ keeps it).
  std::atomic<ShmSegment*> direct_peer_{nullptr};
  // The bound queue pair's execution lock, to the analysis: the RemoteLink and ResponseSink
  // calls come under it (they say so with AssertHeld), and the frames' handling takes it
  // (QueuePair::ExecutionScope). The rest is guarded by it.
  ExecutionCapability execution_;
  // REQUEST frames sent and RESPONSE frames taken: while they differ, a request is under
  // way at the responder and a later one may not overtake it by executing directly.
  uint64_t requests_sent_ GUARDED_BY(execution_) = 0;
  uint64_t responses_taken_ GUARDED_BY(execution_) = 0;
  // What a peer that keeps RC order may send (a lying one loses the connection): requests
  // with ever larger sequences, and responses only to requests under way, in order, so
  // each one's sequence lies after the last one answered and at most the last one sent.
  uint64_t next_inbound_sequence_ GUARDED_BY(execution_) = 0;   // the least a REQUEST may carry
  uint64_t next_response_sequence_ GUARDED_BY(execution_) = 0;  // the least a RESPONSE may carry
  uint64_t last_sent_sequence_ GUARDED_BY(execution_) = 0;      // the largest a RESPONSE may carry
  PeerMappings peer_mappings_ GUARDED_BY(execution_);
  // The window (kWindowBytes). Requester: the sequence and window bytes of each REQUEST on
  // the wire and not answered, in order, and their sum; then the requests that wait for
  // room, encoded.
  std::deque<std::pair<uint64_t, uint64_t>> sent_window_bytes_ GUARDED_BY(execution_);
  uint64_t sent_bytes_under_way_ GUARDED_BY(execution_) = 0;
  std::deque<HeldRequest> held_requests_ GUARDED_BY(execution_);
  // Requester: the requests sent or held whose bytes the wire reads from the requester's
  // memory, in order, until answered.
  std::deque<std::pair<uint64_t, std::shared_ptr<RegionPayload>>> in_place_ GUARDED_BY(execution_);
  // Responder: the peer's requests this side has not answered yet (sequence, window
  // bytes), in order, and their sum.
  std::deque<std::pair<uint64_t, uint64_t>> unanswered_ GUARDED_BY(execution_);
  uint64_t unanswered_bytes_ GUARDED_BY(execution_) = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_WIRE_LINK_H_
