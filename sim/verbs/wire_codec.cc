// wire_codec.cc -- REQUEST and RESPONSE bodies, and the initiator's buffer as a responder
// reaches it through them (PROTOCOL.md).
#include "sim/verbs/wire_codec.h"

#include <string.h>

#include "sim/common/mutex.h"
#include "sim/transport/process_vm.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/region_payload.h"

namespace rpma_sim {
namespace {

// REQUEST flags (PROTOCOL.md).
constexpr uint8_t kByReference = 1;     // the payload stays at an address in the requester
constexpr uint8_t kResponderFails = 2;  // a status follows: the responder answers with it
constexpr uint8_t kInPlace = 4;  // the bytes came from the requester's memory, a byte after them

bool CarriesBytes(SendOpcode opcode) {
  return opcode == SendOpcode::kWrite || opcode == SendOpcode::kSend;
}

// The initiator's buffer as the frames carry it: a write's or send's bytes came in the
// REQUEST, and stay in its body (at `offset`, `length` bytes; `intact` unless the
// requester's buffer went away while they were sent); a read's bytes go back in the
// RESPONSE.
class CarriedBytes : public InitiatorBuffer {
 public:
  CarriedBytes(FrameBody body, size_t offset, size_t length, bool intact)
      : body_(std::move(body)), offset_(offset), length_(length), intact_(intact) {}

  ibv_wc_status CopyTo(uint8_t* target, size_t length) override {
    if (length > length_ || !intact_) return IBV_WC_LOC_PROT_ERR;
    // No copy of 0 bytes: an empty payload's data() may be null (undefined behaviour even
    // for no bytes; tests/fuzz/corpus/frame/regression_zero_length_copy).
    if (length == 0) return IBV_WC_SUCCESS;
    return StatusOfPlacing(GuardedCopy(target, body_.data() + offset_, length));
  }

  ibv_wc_status CopyFrom(const uint8_t* source, size_t length,
                         std::vector<uint8_t>* carried) override {
    carried->resize(length);
    return StatusOfFetching(GuardedCopy(carried->data(), source, length));
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

  ibv_wc_status CopyTo(uint8_t* target, size_t length) override {
    return segment_->ReadPeerMemory(address_, target, length) ? IBV_WC_SUCCESS
                                                              : IBV_WC_LOC_PROT_ERR;
  }

  ibv_wc_status CopyFrom(const uint8_t* source, size_t length,
                         std::vector<uint8_t>* carried) override {
    return segment_->WritePeerMemory(address_, source, length) ? IBV_WC_SUCCESS
                                                               : IBV_WC_LOC_PROT_ERR;
  }

 private:
  std::shared_ptr<ShmSegment> segment_;
  uint64_t address_;
};

}  // namespace

bool MayGoByReference(const SendRequest& request) {
  return request.length >= kProcessVmThreshold && request.opcode != SendOpcode::kAtomicWrite &&
         request.opcode != SendOpcode::kFlush;
}

std::optional<EncodedRequest> EncodeRequest(const SendRequest& request, uint64_t sequence,
                                            PayloadRoute route) {
  const bool by_reference = route == PayloadRoute::kByReference;
  const bool with_bytes = CarriesBytes(request.opcode) && !by_reference && request.length > 0;
  const bool in_place = with_bytes && request.length >= kPayloadInPlace;
  EncodedRequest encoded;
  encoded.sequence = sequence;
  encoded.read_back = request.opcode == SendOpcode::kRead && !by_reference && request.length > 0;
  std::vector<uint8_t>& body = encoded.body;
  body.reserve(64 + (with_bytes && !in_place ? request.length : 0));
  ByteWriter writer(&body);
  writer.U64(sequence);
  writer.U8(static_cast<uint8_t>(request.opcode));
  writer.U8(request.with_imm ? 1 : 0);
  writer.U8(static_cast<uint8_t>(request.flush_kind));
  const bool fails = request.responder_fails != IBV_WC_SUCCESS;
  writer.U8((by_reference ? kByReference : 0) | (fails ? kResponderFails : 0) |
            (in_place ? kInPlace : 0));
  writer.U32(request.imm_data);
  writer.U32(request.rkey);
  writer.U64(request.remote_addr);
  writer.U64(request.length);
  writer.Bytes(request.inline_data, sizeof(request.inline_data));
  if (fails) writer.U32(static_cast<uint32_t>(request.responder_fails));
  if (by_reference) {
    // The responder moves the bytes from or to this buffer, which RDMA's rules keep in
    // place until the request completes.
    writer.U64(reinterpret_cast<uintptr_t>(request.local->addr + request.local_offset));
  } else if (in_place) {
    // The wire reads them when the stream takes them, which RDMA's rules allow too.
    encoded.payload =
        std::make_shared<RegionPayload>(request.local, request.local_offset, request.length);
  } else if (with_bytes) {
    // Checked at the post, but a request kept to execute with others, or held, is encoded
    // later: its region may have been deregistered (and its memory freed) since. Its pages
    // may also have been unmapped under it (guarded_copy.h).
    ReaderLock lock(&MemoryRegionTable::Get().mutex());
    if (!MemoryRegionTable::Get().IsRegisteredLocked(*request.local)) return std::nullopt;
    const size_t at = body.size();
    body.resize(at + request.length);
    if (GuardedCopy(body.data() + at, request.local->addr + request.local_offset, request.length) !=
        CopyResult::kCopied)
      return std::nullopt;
  }
  encoded.window_bytes =
      WindowBytes(body.size() + (encoded.payload ? encoded.payload->size() : 0), request, route);
  return encoded;
}

uint64_t WindowBytes(size_t body_size, const SendRequest& request, PayloadRoute route) {
  const bool read_carried = request.opcode == SendOpcode::kRead && route == PayloadRoute::kCarried;
  return body_size + (read_carried ? request.length : 0);
}

bool DecodeRequest(FrameBody body, std::shared_ptr<ShmSegment> reference_peer,
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
    if (window_bytes) *window_bytes = WindowBytes(body.size(), request, PayloadRoute::kByReference);
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
  if (window_bytes) *window_bytes = WindowBytes(body.size(), request, PayloadRoute::kCarried);
  size_t offset = body.size() - reader.remaining();
  inbound->initiator = std::make_unique<CarriedBytes>(std::move(body), offset, expected_bytes,
                                                      state == kPayloadIntact);
  return true;
}

namespace {

// A RESPONSE's fields before a read's bytes: sequence, status, and how many requests before
// that one it answers too.
constexpr size_t kResponseFieldsSize = 16;
constexpr size_t kAnsweredBeforeOffset = 12;

}  // namespace

std::vector<uint8_t> EncodeResponse(uint64_t sequence, const Outcome& outcome, size_t room) {
  std::vector<uint8_t> body;
  body.reserve(kResponseFieldsSize + room);
  ByteWriter writer(&body);
  writer.U64(sequence);
  writer.U32(static_cast<uint32_t>(outcome.status));
  writer.U32(0);  // answers no request before it
  return body;
}

bool MergeResponses(std::vector<uint8_t>* queued, const std::vector<uint8_t>& next) {
  if (queued->size() != kResponseFieldsSize || next.size() != kResponseFieldsSize) return false;
  ByteReader first(queued->data(), queued->size()), second(next.data(), next.size());
  first.U64();
  const uint32_t first_status = first.U32(), first_before = first.U32();
  second.U64();
  const uint32_t second_status = second.U32(), second_before = second.U32();
  const uint64_t answered = uint64_t{first_before} + 1 + second_before + 1;
  if (first_status != IBV_WC_SUCCESS || second_status != IBV_WC_SUCCESS ||
      answered > kMaxAnsweredTogether)
    return false;
  // `next`'s sequence; the requests before it: all of both but that one.
  memcpy(queued->data(), next.data(), sizeof(uint64_t));
  PutLe(queued->data() + kAnsweredBeforeOffset, answered - 1, sizeof(uint32_t));
  return true;
}

bool DecodeResponse(const Frame& frame, uint64_t* sequence, uint32_t* answered, Outcome* outcome,
                    const uint8_t** data, size_t* length, std::string* error) {
  ByteReader reader(frame.body.data(), frame.body.size());
  *sequence = reader.U64();
  uint32_t status = reader.U32();
  uint32_t before = reader.U32();
  if (!reader.ok()) {
    *error = "truncated response";
    return false;
  }
  if (status > IBV_WC_TM_RNDV_INCOMPLETE) {
    *error = "unknown completion status";
    return false;
  }
  if (before > 0 &&
      (status != IBV_WC_SUCCESS || reader.remaining() != 0 || before >= kMaxAnsweredTogether)) {
    *error = "a response for several requests that is not a success without bytes";
    return false;
  }
  *answered = before + 1;
  outcome->status = static_cast<ibv_wc_status>(status);
  *length = reader.remaining();
  *data = *length > 0 ? reader.Bytes(*length) : nullptr;
  return true;
}

}  // namespace rpma_sim
