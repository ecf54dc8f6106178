// frame_fuzzer.cc -- libFuzzer target: the bytes a peer sends on a wire, read frame by frame as a
// FrameWire does (DecodeFrameHeader, then the body), each REQUEST and RESPONSE body through the
// decoder the receiving WireLink uses (sim/verbs/wire_codec.h). HELLO and ACCEPT bodies have their
// own target (connect_messages_fuzzer.cc); the other frames have no body.
//
// Invariants (PROTOCOL.md): a header that decodes re-encodes to the same bytes; a decoded request's
// bytes are exactly what its body carried after its fields, so its length never exceeds the input;
// bytes sent in place are followed by their state byte, and lost ones are never handed on;
// a request by reference is refused where no segment allows it (as on TCP); a decoded response's
// data is the rest of its body.
#include <infiniband/verbs.h>
#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "sim/transport/frame.h"
#include "sim/verbs/wire_codec.h"
#include "tests/fuzz/fuzz_check.h"

namespace rpma_sim {
namespace {

// REQUEST layout (PROTOCOL.md): the fixed fields, the flags byte, and its three bits.
constexpr size_t kRequestFields = 44;
constexpr size_t kFlagsOffset = 11;
constexpr uint8_t kByReference = 1;
constexpr uint8_t kResponderFails = 2;
constexpr uint8_t kInPlace = 4;
constexpr size_t kResponseFields = 16;

// Decodes a header as the wire does; false where the wire would end.
bool DecodeHeader(const uint8_t* in, FrameType* type, uint32_t* length) {
  std::string error;
  if (!DecodeFrameHeader(in, type, length, &error)) {
    FUZZ_CHECK(!error.empty());
    return false;
  }
  FUZZ_CHECK(*length <= kMaxFrameBody);
  uint8_t again[kFrameHeaderSize];
  EncodeFrameHeader(*type, *length, again);
  // All but the reserved word, which the receiver ignores.
  FUZZ_CHECK(memcmp(again, in, 12) == 0);
  return true;
}

void CheckRequest(const Frame& frame) {
  InboundRequest inbound;
  std::string error;
  // As over TCP (or a segment whose peer this side cannot reach): no reference peer.
  if (!DecodeRequest(frame.body, nullptr, &inbound, &error)) {
    FUZZ_CHECK(!error.empty());
    return;
  }
  const SendRequest& request = inbound.request;
  const uint8_t flags = frame.body[kFlagsOffset];
  FUZZ_CHECK((flags & kByReference) == 0);
  FUZZ_CHECK(request.opcode <= SendOpcode::kSend);
  FUZZ_CHECK(((flags & kResponderFails) != 0) == (request.responder_fails != IBV_WC_SUCCESS));
  FUZZ_CHECK(request.responder_fails == IBV_WC_SUCCESS ||
             IsResponderStatus(request.responder_fails));
  const bool carries = request.opcode == SendOpcode::kWrite || request.opcode == SendOpcode::kSend;
  const size_t fields = kRequestFields + ((flags & kResponderFails) ? 4 : 0);
  const size_t carried = carries ? request.length : 0;
  const bool in_place = (flags & kInPlace) != 0;
  FUZZ_CHECK(!in_place || (carries && carried > 0));
  // Subtracted, not added: a length near 2^64 must not wrap into agreement.
  const size_t state_bytes = in_place ? 1 : 0;
  FUZZ_CHECK(frame.body.size() >= fields + state_bytes);
  FUZZ_CHECK(frame.body.size() - fields - state_bytes == carried);
  const bool intact = !in_place || frame.body.back() == 0;
  FUZZ_CHECK(!in_place || frame.body.back() <= 1);
  if (request.opcode == SendOpcode::kRead) FUZZ_CHECK(request.length <= kMaxFrameBody - 64);
  // The responder reaches the carried bytes through the initiator buffer, never past them.
  FUZZ_CHECK(inbound.initiator != nullptr);
  std::vector<uint8_t> target(carried + 1);
  FUZZ_CHECK((inbound.initiator->CopyTo(target.data(), carried) == IBV_WC_SUCCESS) == intact);
  FUZZ_CHECK(!intact || carried == 0 ||
             memcmp(target.data(), frame.body.data() + fields, carried) == 0);
  FUZZ_CHECK(inbound.initiator->CopyTo(target.data(), carried + 1) == IBV_WC_LOC_PROT_ERR);
}

void CheckResponse(const Frame& frame) {
  uint64_t sequence;
  Outcome outcome;
  const uint8_t* data = nullptr;
  size_t length = 0;
  std::string error;
  uint32_t answered = 0;
  if (!DecodeResponse(frame, &sequence, &answered, &outcome, &data, &length, &error)) {
    FUZZ_CHECK(!error.empty());
    return;
  }
  FUZZ_CHECK(frame.body.size() >= kResponseFields);
  FUZZ_CHECK(length == frame.body.size() - kResponseFields);
  FUZZ_CHECK(length == 0 ? data == nullptr : data == frame.body.data() + kResponseFields);
  FUZZ_CHECK(outcome.status <= IBV_WC_TM_RNDV_INCOMPLETE);
  // Several answered together only as successes without bytes.
  FUZZ_CHECK(answered >= 1 && answered <= kMaxAnsweredTogether);
  FUZZ_CHECK(answered == 1 || (outcome.status == IBV_WC_SUCCESS && length == 0));
}

}  // namespace
}  // namespace rpma_sim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rpma_sim;
  size_t offset = 0;
  while (size - offset >= kFrameHeaderSize) {
    FrameType type;
    uint32_t length;
    if (!DecodeHeader(data + offset, &type, &length)) break;  // the wire ends here
    offset += kFrameHeaderSize;
    if (length > size - offset) break;  // the rest never arrives
    Frame frame{type, FrameBody(data + offset, data + offset + length)};
    offset += length;
    if (type == FrameType::kRequest) CheckRequest(frame);
    if (type == FrameType::kResponse) CheckResponse(frame);
  }
  return 0;
}
