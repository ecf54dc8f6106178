// wire_link.cc -- a queue pair's work requests and outcomes on its wire: REQUESTs out
// through the window, RESPONSEs back, the peer's REQUESTs admitted and delivered, and the
// peer held to what an RC peer may send.
#include "sim/verbs/wire_link.h"

#include <algorithm>
#include <chrono>

#include "sim/fabric/device.h"
#include "sim/fabric/io_service.h"
#include "sim/verbs/queue_pair.h"
#include "sim/verbs/region_payload.h"
#include "sim/verbs/wire_codec.h"

namespace rpma_sim {
namespace {

// The most a wire may queue for a peer that keeps to the window and reads what it is sent:
// this side's requests and the peer's answers (each within a window, or one frame alone),
// and the answers that carry no bytes (at most one per request a send queue holds, on
// either side). More comes from a peer that does not read.
constexpr uint64_t kMaxQueuedBytes = 2 * std::max<uint64_t>(kWindowBytes, kMaxFrameBody) +
                                     2 * uint64_t{kMaxQueuePairWorkRequests} * 64;

// Requests under way (this one included) that leave at once; more wait for the wire's
// next write.
constexpr uint64_t kRequestsSentAtOnce = 8;

// The longest requests kept to execute with others wait for a poll before the progress
// engine executes them (an application that polls rarely, and sleeps on no fd).
constexpr std::chrono::microseconds kDeferredWait{50};

}  // namespace

void WireLink::BindQueuePair(const std::shared_ptr<QueuePair>& qp) {
  {
    MutexLock lock(&mutex_);
    qp_ = qp;
  }
  if (qp) qp->AddProgressSource(weak_from_this());
}

std::shared_ptr<QueuePair> WireLink::qp() {
  MutexLock lock(&mutex_);
  return qp_.lock();
}

void WireLink::Progress() {
  if (shm_.HasDeferred()) RunDeferred();
  FrameWire* wire = this->wire();
  wire->DeliverArrived();
  wire->SendQueued();
}

void WireLink::Malformed(const std::string& what) { wire()->AbortMalformed(what); }

bool WireLink::SendFrame(FrameType type, std::vector<uint8_t> body) {
  return wire()->Send(type, std::move(body));
}

void WireLink::UseSharedMemory(std::shared_ptr<FrameWire> wire,
                               std::shared_ptr<ShmSegment> segment) {
  std::shared_ptr<QueuePair> qp;
  {
    MutexLock lock(&mutex_);
    wire_.store(wire.get(), std::memory_order_release);
    wires_.push_back(std::move(wire));
    qp = qp_.lock();
  }
  shm_.Use(std::move(segment), qp);
}

void WireLink::OnFrame(Frame frame) {
  switch (frame.type) {
    case FrameType::kPlaced:
      return OnPlaced(frame);
    case FrameType::kRequest:
      return OnRequest(std::move(frame));
    default:
      return OnResponse(frame);  // the router hands this link nothing else
  }
}

void WireLink::OnPlaced(const Frame& frame) {
  std::shared_ptr<DirectTarget> target = shm_.target();
  if (!target || !frame.body.empty())
    return Malformed("a PLACED frame where no direct access is, or with a body");
  target->TakePlacements();
}

void WireLink::OnRequest(Frame frame) {
  std::string error;
  InboundRequest inbound;
  uint64_t window_bytes;
  const bool over_shm = shm_.InUse();
  if (!DecodeRequest(std::move(frame.body), over_shm ? shm_.ReferencePeer() : nullptr, &inbound,
                     &error, &window_bytes))
    return Malformed(error);
  inbound.reply = shared_from_this();
  std::shared_ptr<QueuePair> qp = this->qp();
  if (!qp) return Malformed("a work request before the connection was accepted");
  FrameWire* wire = this->wire();
  const size_t queued_bytes = wire->queued_bytes();
  // A peer has at most a send queue's worth (max_qp_wr) of requests unanswered, and a
  // window of bytes, and this side as many of its own: more waiting for the peer to read
  // comes from a peer that sends and never reads, which would make this process queue
  // without bound.
  if (wire->queued_frames() > 2 * kMaxQueuePairWorkRequests || queued_bytes > kMaxQueuedBytes)
    return Malformed("a peer that does not read its answers");
  // What the peer placed directly before sending this request is placed before it (a
  // flush among them).
  if (std::shared_ptr<DirectTarget> target = over_shm ? shm_.target() : nullptr)
    target->TakePlacements();
  {
    QueuePair::ExecutionScope lock(qp.get());
    if (qp->NeverConnectedLocked()) {
      // A client's queue pair is bound to the link before its HELLO, connected at ACCEPT.
      error = "a work request before the connection was accepted";
    } else if (!admission_.Admit(inbound.sequence, window_bytes, queued_bytes,
                                 window_.BytesUnderWay(), &error)) {
    } else if (!qp->DeliverLocked(std::move(inbound))) {
      error = "more requests waiting for a receive than any send queue holds";
    } else {
      return;
    }
  }
  Malformed(error);
}

void WireLink::OnResponse(const Frame& frame) {
  std::string error;
  uint64_t sequence;
  uint32_t count;
  Outcome outcome;
  const uint8_t* data;
  size_t length;
  if (!DecodeResponse(frame, &sequence, &count, &outcome, &data, &length, &error))
    return Malformed(error);
  std::shared_ptr<QueuePair> qp = this->qp();
  if (!qp) return;
  {
    QueuePair::ExecutionScope lock(qp.get());
    RequestWindow::Answered answered[kMaxAnsweredTogether];
    if (window_.TakeResponses(sequence, count, answered)) {
      // Each request answered as if by a RESPONSE of its own (the bytes, if any, are the
      // last one's). A read's answer without its bytes is not "placed directly" (null): it
      // is a response of the wrong length (IBV_WC_BAD_RESP_ERR).
      static const uint8_t kNoBytes = 0;
      for (uint32_t i = 0; i < count; ++i) {
        const bool last = i + 1 == count;
        const uint8_t* bytes = last ? data : nullptr;
        if (answered[i].read_back && bytes == nullptr) bytes = &kNoBytes;
        qp->OnResponseLocked(answered[i].sequence, outcome, bytes, last ? length : 0);
      }
      // The requests that waited for the window (none, if the outcome was an error: Revoke).
      for (EncodedRequest& next : window_.TakeFitting()) Send(std::move(next));
      return;
    }
  }
  Malformed("a response to no request under way");
}

void WireLink::Send(EncodedRequest request) {
  // Deep in a stream of requests, a small one goes with the next write (a poll, or the
  // turn that reads an answer): many in one system call. The first few leave at once, so
  // that a short chain (a write and its flush) is not held back by an answer; a large one
  // is worth its system call alone.
  const FrameWire::Urgency urgency = !request.payload && window_.Unanswered() > kRequestsSentAtOnce
                                         ? FrameWire::Urgency::kWithNextWrite
                                         : FrameWire::Urgency::kNow;
  wire()->Send(FrameType::kRequest, std::move(request.body), std::move(request.payload), urgency);
}

void WireLink::SubmitLocked(const SendRequest& request, uint64_t sequence) {
  RunDeferredLocked();  // posted before it, so executed before it
  // One of them failed: the queue pair flushed this one, or it waits to be flushed.
  if (stopped_) return;
  const PayloadRoute route = MayGoByReference(request) && shm_.PeerReachesUs()
                                 ? PayloadRoute::kByReference
                                 : PayloadRoute::kCarried;
  std::optional<EncodedRequest> encoded = EncodeRequest(request, sequence, route);
  if (!encoded) {
    // Its buffer was deregistered or unmapped since its post: it fails where it stands, and nothing
    // after it leaves.
    stopped_ = true;
    std::shared_ptr<QueuePair> qp = this->qp();
    if (!qp) return;
    qp->execution().AssertHeld();  // the caller's (RemoteLink)
    qp->FailLocallyLocked(sequence, IBV_WC_LOC_PROT_ERR);
    return;
  }
  if (std::optional<EncodedRequest> now = window_.Submit(std::move(*encoded)))
    Send(std::move(*now));
}

DirectExecution WireLink::ExecuteDirectlyLocked(const SendRequest& request, uint64_t sequence,
                                                Batching batching) {
  // RC order: one under way must not be overtaken. (Nothing kept waits while one is: the
  // link runs what it kept before it submits anything.) Stopped, SubmitLocked drops it.
  if (stopped_ || !window_.Idle() || !shm_.InUse()) return DirectExecution::kSubmit;
  bool tell_target = false;
  switch (shm_.TryExecute(request, sequence, batching, &tell_target)) {
    case DirectStep::kDeclined:
      return DirectExecution::kSubmit;
    case DirectStep::kExecuted:
      if (tell_target) wire()->Send(FrameType::kPlaced, {});
      return DirectExecution::kExecuted;
    case DirectStep::kDeferredFirst:
      ScheduleDeferredRun();
      return DirectExecution::kKept;
    case DirectStep::kDeferred:
      return DirectExecution::kKept;
    case DirectStep::kBehindDeferred:
      break;
  }
  RunDeferredLocked();
  return ExecuteDirectlyLocked(request, sequence, batching);  // nothing is kept now
}

void WireLink::ScheduleDeferredRun() {
  std::shared_ptr<QueuePair> qp = this->qp();
  // An application asleep on its completion fd hears of them from the engine's turn at
  // once; one that polls runs them itself, and the engine's later turn is for one that
  // does neither for a while (it waits for the peer's answer to a write, say). One such
  // turn waits at a time.
  if (qp && qp->SendCompletionAwaited()) return OnArmed();
  if (!deferred_turn_waits_.exchange(true)) ScheduleDeferredTurn();
}

void WireLink::ScheduleDeferredTurn() {
  RunAt(std::chrono::steady_clock::now() + kDeferredWait, [weak = weak_from_this()] {
    std::shared_ptr<WireLink> link = weak.lock();
    if (!link) return;
    std::shared_ptr<QueuePair> qp = link->qp();
    // A thread that holds the lock is the application's, posting or polling: it runs them
    // itself, or the next turn does. The engine does not queue behind it.
    if (qp && link->shm_.HasDeferred() &&
        !qp->TryRunExecuting([&link] { link->RunDeferredLocked(); }))
      return link->ScheduleDeferredTurn();
    link->deferred_turn_waits_.store(false);
    if (link->shm_.HasDeferred()) link->ScheduleDeferredRun();  // kept since
  });
}

void WireLink::OnArmed() {
  if (!shm_.HasDeferred()) return;
  RunSoon([weak = weak_from_this()] {
    if (std::shared_ptr<WireLink> link = weak.lock()) link->RunDeferred();
  });
}

void WireLink::RunDeferred() {
  if (!shm_.HasDeferred()) return;
  std::shared_ptr<QueuePair> qp = this->qp();
  if (!qp) return;
  QueuePair::ExecutionScope lock(qp.get());
  RunDeferredLocked();
}

void WireLink::RunDeferredLocked() {
  if (!shm_.HasDeferred()) return;
  size_t executed;
  bool tell_target;
  std::vector<DeferredRequest> requests = shm_.ExecuteDeferred(&executed, &tell_target);
  if (tell_target) wire()->Send(FrameType::kPlaced, {});
  std::shared_ptr<QueuePair> qp = this->qp();
  for (size_t i = 0; i < requests.size() && !stopped_; ++i) {
    const DeferredRequest& deferred = requests[i];
    // The rest go as they would have at their post: directly one at a time, or submitted.
    if (i < executed || ExecuteDirectlyLocked(deferred.request, deferred.sequence,
                                              Batching::kNow) == DirectExecution::kExecuted) {
      if (!qp) continue;
      qp->execution().AssertHeld();  // the caller's (RemoteLink)
      qp->OnResponseLocked(deferred.sequence, Outcome{}, nullptr, 0);
    } else {
      SubmitLocked(deferred.request, deferred.sequence);
    }
  }
}

void WireLink::ConnectedLocked() { shm_.SetConnected(); }

void WireLink::RevokeLocked() {
  stopped_ = true;
  shm_.Revoke();
  window_.Revoke();
}

void WireLink::RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                             size_t length) {
  admission_.Answered(sequence);
  std::vector<uint8_t> body = EncodeResponse(sequence, outcome, read_data ? length : 0);
  if (read_data != nullptr) {
    ByteWriter(&body).Bytes(read_data, length);
    wire()->Send(FrameType::kResponse, std::move(body));
    return;
  }
  // Successes given in one turn go as one RESPONSE (MergeResponses).
  wire()->SendMerging(FrameType::kResponse, std::move(body), MergeResponses);
}

void WireLink::RespondWithBytesLocked(uint64_t sequence, const Outcome& outcome,
                                      std::vector<uint8_t> read_data) {
  // Small ones are copied into the body: one allocation less.
  if (read_data.size() < kPayloadInPlace)
    return RespondLocked(sequence, outcome, read_data.data(), read_data.size());
  admission_.Answered(sequence);
  wire()->Send(FrameType::kResponse, EncodeResponse(sequence, outcome, 0),
               std::make_shared<OwnedPayload>(std::move(read_data)));
}

}  // namespace rpma_sim
