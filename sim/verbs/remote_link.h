// remote_link.h -- how a queue pair's work requests reach the responder and how their
// outcomes come back, whatever carries them (a direct call in one process, or a transport).
//
// The requester numbers every work request (its send-queue sequence) and submits it over its
// RemoteLink; the responder executes it (QueuePair::DeliverLocked) and answers through the
// request's ResponseSink. Responses come back in submission order, as RC guarantees.
#ifndef RPMA_SIM_VERBS_REMOTE_LINK_H_
#define RPMA_SIM_VERBS_REMOTE_LINK_H_

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <vector>

#include "sim/verbs/send_request.h"

namespace rpma_sim {

// What executing a work request at the responder gave.
struct Outcome {
  ibv_wc_status status = IBV_WC_SUCCESS;
};

// Receives the outcome of work requests submitted by one requester.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;

  // The responder finished `sequence`. For a successful read carried by a transport,
  // `read_data` holds its `length` bytes; nullptr when the bytes were placed directly (in
  // process). Requires the execution lock.
  virtual void RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                             size_t length) = 0;
};

class ShmSegment;

// A buffer in the requester's process that the responder reaches with process_vm, through
// the connection's shared-memory segment (transport/shm_segment.h).
struct PeerBuffer {
  std::shared_ptr<ShmSegment> segment;  // null: none
  uint64_t address = 0;
};

// A work request as the responder sees it.
struct InboundRequest {
  // In process, `request.local` is the requester's own buffer: bytes are copied straight
  // from or to it. Over a transport, `payload` carries a write's or send's bytes instead,
  // or `peer_buffer` says where in the requester they are (and where a read's bytes go).
  SendRequest request;
  uint64_t sequence = 0;
  std::vector<uint8_t> payload;
  PeerBuffer peer_buffer;
  std::shared_ptr<ResponseSink> reply;

  bool carries_payload() const { return !request.local; }
};

// The requester's end of the path to its responder.
class RemoteLink {
 public:
  virtual ~RemoteLink() = default;

  // Carries `request` to the responder. Requires the execution lock.
  virtual void SubmitLocked(const SendRequest& request, uint64_t sequence) = 0;

  // The queue pair is about to report its outstanding requests flushed: afterwards the
  // responder must not touch this side's buffers any more. Requires the execution lock.
  virtual void RevokeLocked() {}
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_REMOTE_LINK_H_
