// wire_codec.h -- REQUEST and RESPONSE frame bodies: a work request encoded for its
// responder, decoded there with the initiator's bytes left where they came (in the body, or
// in the requester's memory at an address), and an outcome with a read's bytes back. No
// state: the window, the responder's admission and the shared-memory mode are the link's
// parts (request_window.h, shm_mode.h). The layout is in
// sim/transport/PROTOCOL.md.
#ifndef RPMA_SIM_VERBS_WIRE_CODEC_H_
#define RPMA_SIM_VERBS_WIRE_CODEC_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/transport/frame.h"
#include "sim/transport/shm_segment.h"
#include "sim/verbs/remote_link.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

class RegionPayload;

// A write's or send's bytes from this many on are sent from the requester's memory rather
// than copied into the frame (region_payload.h), and a read's from the buffer the responder
// copied them into; below, the copy costs less than keeping track of them.
constexpr size_t kPayloadInPlace = 16 * 1024;

// How a request's payload reaches its responder: carried in the frame, or left in the
// requester's memory for the responder to fetch by address (shared memory, process_vm).
enum class PayloadRoute { kCarried, kByReference };

// Whether `request` may leave its payload by reference, where the responder can reach the
// requester's memory: large enough to be worth a system call, and a write, read or send.
bool MayGoByReference(const SendRequest& request);

// A REQUEST encoded: its body, the payload the wire reads from the requester's memory as it
// sends it (in place: region_payload.h; or null), and what it counts against the window.
struct EncodedRequest {
  uint64_t sequence = 0;
  uint64_t window_bytes = 0;
  bool read_back = false;  // a read whose RESPONSE carries its bytes (not by reference)
  std::vector<uint8_t> body;
  std::shared_ptr<RegionPayload> payload;
};

// Encodes `request`, the requester's work request `sequence`. A carried payload below
// kPayloadInPlace is copied into the body now, under the region table's lock; nullopt if
// its region is no longer registered, or its bytes cannot be read (the application
// unmapped them): the request fails locally, IBV_WC_LOC_PROT_ERR.
std::optional<EncodedRequest> EncodeRequest(const SendRequest& request, uint64_t sequence,
                                            PayloadRoute route);

// What a request counts against the window (request_window.h): its frame's body of
// `body_size` bytes, and a read's bytes unless they go straight to the requester's memory.
uint64_t WindowBytes(size_t body_size, const SendRequest& request, PayloadRoute route);

// Decodes a REQUEST body; a payload it carries stays in it (the request keeps the body),
// one named by address is reached through `reference_peer` (the segment through which this
// side reaches the peer's memory, or null: then such a request is malformed). False (with
// the reason) if it is malformed. *window_bytes (if not null): what it counts against the
// window.
bool DecodeRequest(FrameBody body, std::shared_ptr<ShmSegment> reference_peer,
                   InboundRequest* inbound, std::string* error, uint64_t* window_bytes = nullptr);

// A RESPONSE body's fields for `sequence`'s `outcome`, with room reserved for `room` bytes
// of a read's data to follow.
std::vector<uint8_t> EncodeResponse(uint64_t sequence, const Outcome& outcome, size_t room);

// The most requests one RESPONSE answers: successes without bytes, given together, go as
// one RESPONSE for up to this many (MergeResponses).
constexpr uint32_t kMaxAnsweredTogether = 64;

// FrameWire::MergeBodies for RESPONSEs: folds `next` into `queued` when both answer with
// success and no bytes and together they answer at most kMaxAnsweredTogether requests.
// `queued` then answers its requests and `next`'s, up to `next`'s sequence.
bool MergeResponses(std::vector<uint8_t>* queued, const std::vector<uint8_t>& next);

// Decodes a RESPONSE body: it answers *answered requests (1, or up to
// kMaxAnsweredTogether successes without bytes), the last of them *sequence; *data points
// into the frame. False if it is malformed.
bool DecodeResponse(const Frame& frame, uint64_t* sequence, uint32_t* answered, Outcome* outcome,
                    const uint8_t** data, size_t* length, std::string* error);

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_WIRE_CODEC_H_
