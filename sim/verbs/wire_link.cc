// wire_link.cc -- encoding and decoding REQUEST and RESPONSE frames, and holding the peer to
// what an RC peer may send: requests in sequence, responses only to requests under way, no
// more waiting than send queues hold.
#include "sim/verbs/wire_link.h"
#include "sim/common/mutex.h"

#include <string.h>

#include <algorithm>

#include "sim/common/log.h"
#include "sim/fabric/config.h"
#include "sim/fabric/device.h"
#include "sim/transport/process_vm.h"
#include "sim/verbs/direct_request.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/queue_pair.h"
#include "sim/verbs/region_payload.h"

namespace rpma_sim {
namespace {

bool CarriesBytes(SendOpcode opcode) {
  return opcode == SendOpcode::kWrite || opcode == SendOpcode::kSend;
}

// Whether a request of `bytes` may join `under_way` bytes at the responder (the window).
bool FitsWindow(uint64_t under_way, uint64_t bytes) {
  return under_way == 0 || under_way + bytes <= WireLink::kWindowBytes;
}

// What a wire may queue besides requests and answers: connection management (HELLO,
// ACCEPT, DISCONNECT; each far smaller).
constexpr uint64_t kConnectionFramesSlack = 64 << 10;

// The most a wire may queue for a peer that keeps to the window and reads what it is sent:
// this side's requests and the peer's answers (each within a window, or one frame alone),
// and the answers that carry no bytes (at most one per request a send queue holds, on
// either side). More comes from a peer that does not read.
constexpr uint64_t kMaxQueuedBytes = 2 * std::max<uint64_t>(WireLink::kWindowBytes, kMaxFrameBody) +
                                     2 * uint64_t{kMaxQueuePairWorkRequests} * 64;

// A write's or send's bytes from this many on are sent from the requester's memory rather
// than copied into the frame (region_payload.h), and a read's from the buffer the responder
// copied them into; below, the copy costs less than keeping track of them.
constexpr size_t kPayloadInPlace = 16 * 1024;

// REQUEST flags (PROTOCOL.md).
constexpr uint8_t kByReference = 1;     // the payload stays at an address in the requester
constexpr uint8_t kResponderFails = 2;  // a status follows: the responder answers with it
constexpr uint8_t kInPlace = 4;  // the bytes came from the requester's memory, a byte after them

// The initiator's buffer as the frames carry it: a write's or send's bytes came in the
// REQUEST, and stay in its body (at `offset`, `length` bytes; `intact` unless the
// requester's buffer went away while they were sent); a read's bytes go back in the
// RESPONSE.
class CarriedBytes : public InitiatorBuffer {
 public:
  CarriedBytes(FrameBody body, size_t offset, size_t length, bool intact)
      : body_(std::move(body)), offset_(offset), length_(length), intact_(intact) {}

  bool CopyTo(uint8_t* target, size_t length) override {
    if (length > length_ || !intact_) return false;
    // Not memcpy for 0 bytes: an empty payload's data() may be null (undefined behaviour
    // even for no bytes; tests/fuzz/corpus/frame/regression_zero_length_copy).
    if (length > 0) memcpy(target, body_.data() + offset_, length);
    return true;
  }

  bool CopyFrom(const uint8_t* source, size_t length, std::vector<uint8_t>* carried) override {
    carried->assign(source, source + length);
    return true;
  }

 private:
  FrameBody body_;
  size_t offset_;
  size_t length_;
  bool intact_;
};

// The initiator's buffer in the peer process, at an address the REQUEST named, reached with
// process_vm through the connection's segment (which refuses once references are revoked).
class PeerProcessMemory : public InitiatorBuffer {
 public:
  PeerProcessMemory(std::shared_ptr<ShmSegment> segment, uint64_t address)
      : segment_(std::move(segment)), address_(address) {}

  bool CopyTo(uint8_t* target, size_t length) override {
    return segment_->ReadPeerMemory(address_, target, length);
  }

  bool CopyFrom(const uint8_t* source, size_t length, std::vector<uint8_t>* carried) override {
    return segment_->WritePeerMemory(address_, source, length);
  }

 private:
  std::shared_ptr<ShmSegment> segment_;
  uint64_t address_;
};

}  // namespace

WireLink::~WireLink() {
  if (direct_target_) direct_target_->Close();
}

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
  std::shared_ptr<FrameWire> wire = this->wire();
  wire->DeliverArrived();
  wire->SendQueued();
}

void WireLink::Malformed(const std::string& what) { wire()->AbortMalformed(what); }

void WireLink::OnFrame(Frame frame) {
  std::string error;
  if (frame.type == FrameType::kPlaced) {
    std::shared_ptr<DirectTarget> direct_target;
    {
      MutexLock lock(&mutex_);
      direct_target = direct_target_;
    }
    if (!direct_target || !frame.body.empty())
      return Malformed("a PLACED frame where no direct access is, or with a body");
    direct_target->TakePlacements();
    return;
  }
  if (frame.type == FrameType::kRequest) {
    InboundRequest inbound;
    uint64_t window_bytes;
    if (!DecodeRequest(std::move(frame.body), ReferencePeer(), &inbound, &error, &window_bytes))
      return Malformed(error);
    inbound.reply = shared_from_this();
    std::shared_ptr<QueuePair> qp;
    std::shared_ptr<DirectTarget> direct_target;
    size_t queued_frames, queued_bytes;
    {
      MutexLock lock(&mutex_);
      qp = qp_.lock();
      direct_target = direct_target_;
      queued_frames = wire_->queued_frames();
      queued_bytes = wire_->queued_bytes();
    }
    if (!qp) return Malformed("a work request before the connection was accepted");
    // A peer has at most a send queue's worth (max_qp_wr) of requests unanswered, and a
    // window of bytes, and this side as many of its own: more waiting for the peer to read
    // comes from a peer that sends and never reads, which would make this process queue
    // without bound.
    if (queued_frames > 2 * kMaxQueuePairWorkRequests || queued_bytes > kMaxQueuedBytes)
      return Malformed("a peer that does not read its answers");
    // What the peer placed directly before sending this request is placed before it (a
    // flush among them).
    if (direct_target) direct_target->TakePlacements();
    {
      QueuePair::ExecutionScope lock(qp.get());
      execution_.AssertHeld();  // the bound queue pair's, just taken
      uint64_t sequence = inbound.sequence;
      // The last sequence there is would leave no next one: no send queue gets there.
      if (sequence < next_inbound_sequence_ || sequence == UINT64_MAX) {
        error = "a request out of sequence (RC order)";
      } else if (!AdmitLocked(sequence, window_bytes, queued_bytes, &error)) {
      } else if (!qp->DeliverLocked(std::move(inbound))) {
        error = "more requests waiting for a receive than any send queue holds";
      } else {
        next_inbound_sequence_ = sequence + 1;
        return;
      }
    }
    return Malformed(error);
  }
  uint64_t sequence;
  Outcome outcome;
  const uint8_t* data;
  size_t length;
  if (!DecodeResponse(frame, &sequence, &outcome, &data, &length, &error)) return Malformed(error);
  if (std::shared_ptr<QueuePair> qp = this->qp()) {
    {
      QueuePair::ExecutionScope lock(qp.get());
      execution_.AssertHeld();  // the bound queue pair's, just taken
      if (responses_taken_ < requests_sent_ && sequence >= next_response_sequence_ &&
          sequence <= last_sent_sequence_) {
        ++responses_taken_;
        next_response_sequence_ = sequence + 1;
        // Requests sent but executed directly have no RESPONSE: theirs are counted out too.
        while (!sent_window_bytes_.empty() && sent_window_bytes_.front().first <= sequence) {
          sent_bytes_under_way_ -= sent_window_bytes_.front().second;
          sent_window_bytes_.pop_front();
        }
        ForgetInPlaceLocked(sequence);
        qp->OnResponseLocked(sequence, outcome, data, length);
        SendHeldLocked();  // none, if the outcome was an error (RevokeLocked)
        return;
      }
    }
    return Malformed("a response to no request under way");
  }
}

bool WireLink::SendFrame(FrameType type, std::vector<uint8_t> body) {
  return wire()->Send(type, std::move(body));
}

std::shared_ptr<FrameWire> WireLink::wire() {
  MutexLock lock(&mutex_);
  return wire_;
}

void WireLink::UseSharedMemory(std::shared_ptr<FrameWire> wire,
                               std::shared_ptr<ShmSegment> segment) {
  std::shared_ptr<QueuePair> qp;
  {
    MutexLock lock(&mutex_);
    wire_ = std::move(wire);
    segment_ = segment;
    qp = qp_.lock();
  }
  if (!ShmProcessVmEnabled() || !ShmDirectEnabled() || !qp) return;
  if (segment->WeReachPeer()) direct_peer_.store(segment.get());
  std::shared_ptr<DirectTarget> target = DirectTarget::Start(segment, qp->pd(), qp->qp_num());
  bool connected;
  {
    MutexLock lock(&mutex_);
    direct_target_ = target;
    connected = connected_;
  }
  if (connected) target->SetConnected();
}

void WireLink::ConnectedLocked() {
  execution_.AssertHeld();  // called by its queue pair, under its lock (remote_link.h)
  std::shared_ptr<DirectTarget> target;
  {
    MutexLock lock(&mutex_);
    connected_ = true;
    target = direct_target_;
  }
  if (target) target->SetConnected();
}

bool WireLink::ExecuteDirectlyLocked(const SendRequest& request, uint64_t sequence) {
  execution_.AssertHeld();  // called by its queue pair, under its lock (remote_link.h)
  if (requests_sent_ != responses_taken_) return false;  // RC order
  ShmSegment* peer = direct_peer_.load(std::memory_order_acquire);
  bool tell_target = false;
  if (peer == nullptr || !ExecuteOnPeer(*peer, peer_mappings_, request, sequence, &tell_target))
    return false;
  if (tell_target) wire()->Send(FrameType::kPlaced, {});
  return true;
}

std::shared_ptr<ShmSegment> WireLink::ReferencePeer() {
  MutexLock lock(&mutex_);
  return segment_ && segment_->WeReachPeer() ? segment_ : nullptr;
}

void WireLink::RevokeLocked() {
  execution_.AssertHeld();  // called by its queue pair, under its lock (remote_link.h)
  std::shared_ptr<ShmSegment> segment;
  std::shared_ptr<DirectTarget> target;
  {
    MutexLock lock(&mutex_);
    segment = segment_;
    target = direct_target_;
  }
  direct_peer_.store(nullptr);
  if (target) target->Close();
  if (segment) segment->RevokeReferences();
  held_requests_.clear();  // flushed: they never leave
  // Nor are their buffers read any more, which the application may free now.
  for (auto& sent : in_place_) sent.second->Revoke();
  in_place_.clear();
}

bool WireLink::ByReference(const SendRequest& request) {
  if (request.length < kProcessVmThreshold || request.opcode == SendOpcode::kAtomicWrite ||
      request.opcode == SendOpcode::kFlush)
    return false;
  MutexLock lock(&mutex_);
  return segment_ && segment_->PeerReachesUs();
}

void WireLink::SubmitLocked(const SendRequest& request, uint64_t sequence) {
  execution_.AssertHeld();  // called by its queue pair, under its lock (remote_link.h)
  std::vector<uint8_t> body;
  bool by_reference = ByReference(request);
  bool with_bytes = CarriesBytes(request.opcode) && !by_reference && request.length > 0;
  bool in_place = with_bytes && request.length >= kPayloadInPlace;
  body.reserve(64 + (with_bytes && !in_place ? request.length : 0));
  ByteWriter writer(&body);
  writer.U64(sequence);
  writer.U8(static_cast<uint8_t>(request.opcode));
  writer.U8(request.with_imm ? 1 : 0);
  writer.U8(static_cast<uint8_t>(request.flush_kind));
  bool fails = request.responder_fails != IBV_WC_SUCCESS;
  writer.U8((by_reference ? kByReference : 0) | (fails ? kResponderFails : 0) |
            (in_place ? kInPlace : 0));
  writer.U32(request.imm_data);
  writer.U32(request.rkey);
  writer.U64(request.remote_addr);
  writer.U64(request.length);
  writer.Bytes(request.inline_data, sizeof(request.inline_data));
  if (fails) writer.U32(static_cast<uint32_t>(request.responder_fails));
  std::shared_ptr<RegionPayload> payload;
  if (by_reference) {
    // The responder moves the bytes from or to this buffer, which RDMA's rules keep in
    // place until the request completes.
    writer.U64(reinterpret_cast<uintptr_t>(request.local->addr + request.local_offset));
  } else if (in_place) {
    // The wire reads them when the stream takes them, which RDMA's rules allow too.
    payload = std::make_shared<RegionPayload>(request.local, request.local_offset, request.length);
    in_place_.emplace_back(sequence, payload);
  } else if (with_bytes) {
    // The requester checked its buffer just now, under the same execution lock.
    ReaderLock lock(&MemoryRegionTable::Get().mutex());
    writer.Bytes(request.local->addr + request.local_offset, request.length);
  }
  // Sent or held, it is under way: a later request may not overtake it (ExecuteDirectly).
  ++requests_sent_;
  uint64_t window_bytes =
      WindowBytes(body.size() + (payload ? payload->size() : 0), request, by_reference);
  HeldRequest next{sequence, window_bytes, std::move(body), std::move(payload)};
  if (held_requests_.empty() && FitsWindow(sent_bytes_under_way_, window_bytes)) {
    SendRequestLocked(std::move(next));
  } else {
    held_requests_.push_back(std::move(next));
  }
}

uint64_t WireLink::WindowBytes(size_t body_size, const SendRequest& request, bool by_reference) {
  bool read_carried = request.opcode == SendOpcode::kRead && !by_reference;
  return body_size + (read_carried ? request.length : 0);
}

void WireLink::SendRequestLocked(HeldRequest request) {
  last_sent_sequence_ = request.sequence;
  sent_window_bytes_.emplace_back(request.sequence, request.window_bytes);
  sent_bytes_under_way_ += request.window_bytes;
  wire()->Send(FrameType::kRequest, std::move(request.body), std::move(request.payload));
}

void WireLink::SendHeldLocked() {
  while (!held_requests_.empty() &&
         FitsWindow(sent_bytes_under_way_, held_requests_.front().window_bytes)) {
    HeldRequest next = std::move(held_requests_.front());
    held_requests_.pop_front();
    SendRequestLocked(std::move(next));
  }
}

void WireLink::ForgetInPlaceLocked(uint64_t sequence) {
  while (!in_place_.empty() && in_place_.front().first <= sequence) in_place_.pop_front();
}

bool WireLink::AdmitLocked(uint64_t sequence, uint64_t window_bytes, size_t queued_bytes,
                           std::string* error) {
  if (!FitsWindow(unanswered_bytes_, window_bytes)) {
    *error = "more bytes under way than the window (" + std::to_string(kWindowBytes >> 20) +
             " MiB) allows";
    return false;
  }
  // The answers still queued for the peer are under way for it too: the queue holds at
  // least them beyond this side's own requests (which hold no more than their window
  // bytes) and a few connection-management frames.
  uint64_t own = sent_bytes_under_way_ + kConnectionFramesSlack;
  uint64_t answers_queued = queued_bytes > own ? queued_bytes - own : 0;
  if (answers_queued > 0 && !FitsWindow(unanswered_bytes_ + answers_queued, window_bytes)) {
    *error = "a peer that does not read its answers";
    return false;
  }
  unanswered_.emplace_back(sequence, window_bytes);
  unanswered_bytes_ += window_bytes;
  return true;
}

std::vector<uint8_t> WireLink::AnswerLocked(uint64_t sequence, const Outcome& outcome,
                                            size_t length) {
  // Answered (in order): the peer may send as much again.
  while (!unanswered_.empty() && unanswered_.front().first <= sequence) {
    unanswered_bytes_ -= unanswered_.front().second;
    unanswered_.pop_front();
  }
  std::vector<uint8_t> body;
  body.reserve(16 + length);
  ByteWriter writer(&body);
  writer.U64(sequence);
  writer.U32(static_cast<uint32_t>(outcome.status));
  writer.U32(0);
  return body;
}

void WireLink::RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                             size_t length) {
  execution_.AssertHeld();  // called by its queue pair, under its lock (remote_link.h)
  std::vector<uint8_t> body = AnswerLocked(sequence, outcome, read_data ? length : 0);
  if (read_data != nullptr) ByteWriter(&body).Bytes(read_data, length);
  wire()->Send(FrameType::kResponse, std::move(body));
}

void WireLink::RespondWithBytesLocked(uint64_t sequence, const Outcome& outcome,
                                      std::vector<uint8_t> read_data) {
  execution_.AssertHeld();  // called by its queue pair, under its lock (remote_link.h)
  // Small ones are copied into the body: one allocation less.
  if (read_data.size() < kPayloadInPlace)
    return RespondLocked(sequence, outcome, read_data.data(), read_data.size());
  wire()->Send(FrameType::kResponse, AnswerLocked(sequence, outcome, 0),
               std::make_shared<OwnedPayload>(std::move(read_data)));
}

bool WireLink::DecodeRequest(FrameBody body, std::shared_ptr<ShmSegment> reference_peer,
                             InboundRequest* inbound, std::string* error, uint64_t* window_bytes) {
  ByteReader reader(body.data(), body.size());
  SendRequest& request = inbound->request;
  inbound->sequence = reader.U64();
  uint8_t opcode = reader.U8();
  uint8_t with_imm = reader.U8();
  uint8_t flush_kind = reader.U8();
  uint8_t flags = reader.U8();
  request.imm_data = reader.U32();
  request.rkey = reader.U32();
  request.remote_addr = reader.U64();
  request.length = reader.U64();
  const uint8_t* inline_data = reader.Bytes(sizeof(request.inline_data));
  if (!reader.ok()) {
    *error = "truncated request";
    return false;
  }
  if (opcode > static_cast<uint8_t>(SendOpcode::kSend) || with_imm > 1 || flush_kind > 1 ||
      (flags & ~(kByReference | kResponderFails | kInPlace)) != 0) {
    *error = "unknown request kind";
    return false;
  }
  if (flags & kResponderFails) {
    uint32_t fails = reader.U32();
    if (!reader.ok() || (fails != IBV_WC_REM_OP_ERR && fails != IBV_WC_REM_INV_REQ_ERR)) {
      *error = "a remote error no fault rule gives";
      return false;
    }
    request.responder_fails = static_cast<ibv_wc_status>(fails);
  }
  request.opcode = static_cast<SendOpcode>(opcode);
  request.with_imm = with_imm != 0;
  request.flush_kind = static_cast<FlushKind>(flush_kind);
  memcpy(request.inline_data, inline_data, sizeof(request.inline_data));
  if (flags & kByReference) {
    bool fits = request.opcode == SendOpcode::kRead || CarriesBytes(request.opcode);
    uint64_t address = reader.U64();
    if (!reader.ok() || reader.remaining() != 0 || !reference_peer || !fits ||
        (flags & kInPlace) != 0) {
      *error = "a request by address this side cannot follow";
      return false;
    }
    inbound->initiator = std::make_unique<PeerProcessMemory>(std::move(reference_peer), address);
    if (window_bytes) *window_bytes = WindowBytes(body.size(), request, true);
    return true;
  }
  size_t expected_bytes = CarriesBytes(request.opcode) ? request.length : 0;
  bool in_place = (flags & kInPlace) != 0;
  if (in_place && expected_bytes == 0) {
    *error = "bytes in place where a request carries none";
    return false;
  }
  // In place, the byte after the bytes says whether they are the requester's. (Compared
  // without adding to a length the peer chose: that could wrap.)
  size_t state_bytes = in_place ? 1 : 0;
  if (reader.remaining() < state_bytes || reader.remaining() - state_bytes != expected_bytes) {
    *error = "request length does not match its bytes";
    return false;
  }
  uint8_t state = in_place ? body.back() : kPayloadIntact;
  if (state != kPayloadIntact && state != kPayloadLost) {
    *error = "bytes in place neither intact nor lost";
    return false;
  }
  if (request.opcode == SendOpcode::kRead && request.length > kMaxFrameBody - 64) {
    *error = "read too large";
    return false;
  }
  if (window_bytes) *window_bytes = WindowBytes(body.size(), request, false);
  size_t offset = body.size() - reader.remaining();
  inbound->initiator = std::make_unique<CarriedBytes>(std::move(body), offset, expected_bytes,
                                                      state == kPayloadIntact);
  return true;
}

bool WireLink::DecodeResponse(const Frame& frame, uint64_t* sequence, Outcome* outcome,
                              const uint8_t** data, size_t* length, std::string* error) {
  ByteReader reader(frame.body.data(), frame.body.size());
  *sequence = reader.U64();
  uint32_t status = reader.U32();
  reader.U32();
  if (!reader.ok()) {
    *error = "truncated response";
    return false;
  }
  if (status > IBV_WC_TM_RNDV_INCOMPLETE) {
    *error = "unknown completion status";
    return false;
  }
  outcome->status = static_cast<ibv_wc_status>(status);
  *length = reader.remaining();
  *data = *length > 0 ? reader.Bytes(*length) : nullptr;
  return true;
}

}  // namespace rpma_sim
