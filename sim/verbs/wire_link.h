// wire_link.h -- work requests and their outcomes carried over a TCP wire.
//
// The requester's end encodes each work request as a REQUEST frame (a write's or send's bytes
// travel with it); the responder's end answers with a RESPONSE frame (a read's bytes travel
// with it). Both ends of a connection use the same WireLink over their own wire. The frame
// bodies are laid out in sim/transport/PROTOCOL.md.
#ifndef RPMA_SIM_VERBS_WIRE_LINK_H_
#define RPMA_SIM_VERBS_WIRE_LINK_H_

#include <memory>
#include <string>

#include "sim/transport/frame.h"
#include "sim/transport/tcp_wire.h"
#include "sim/verbs/remote_link.h"

namespace rpma_sim {

class WireLink : public RemoteLink, public ResponseSink {
 public:
  explicit WireLink(std::shared_ptr<TcpWire> wire) : wire_(std::move(wire)) {}

  // Requester: encodes and queues a REQUEST frame.
  void SubmitLocked(const SendRequest& request, uint64_t sequence) override;

  // Responder: encodes and queues a RESPONSE frame.
  void RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                     size_t length) override;

  // Decodes a REQUEST body. False (with the reason) if it is malformed.
  static bool DecodeRequest(const Frame& frame, InboundRequest* inbound, std::string* error);

  // Decodes a RESPONSE body; *data points into the frame. False if it is malformed.
  static bool DecodeResponse(const Frame& frame, uint64_t* sequence, Outcome* outcome,
                             const uint8_t** data, size_t* length, std::string* error);

 private:
  std::shared_ptr<TcpWire> wire_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_WIRE_LINK_H_
