// connect_messages.h -- the bodies of HELLO and ACCEPT (PROTOCOL.md): the private data of
// rdma_connect/rdma_accept, and the client's offer of a shared-memory segment with the
// server's answer to it.
#ifndef RPMA_SIM_CM_CONNECT_MESSAGES_H_
#define RPMA_SIM_CM_CONNECT_MESSAGES_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "sim/transport/frame.h"

namespace rpma_sim {

// A segment the client created for the connection (transport/shm_segment.h).
struct ShmOffer {
  std::string name;
  uint64_t nonce = 0;
  bool required = false;  // RPMA_SIM_TRANSPORT=shm: no shared memory, no connection
};

struct HelloMessage {
  std::vector<uint8_t> private_data;
  bool has_offer = false;
  ShmOffer offer;
  uint64_t node = 0;  // the client's node (fabric/node.h): the link's other end
};

struct AcceptMessage {
  std::vector<uint8_t> private_data;
  bool shared_memory = false;  // the server took the offer: data moves through the segment
  uint64_t node = 0;           // the server's node
};

std::vector<uint8_t> EncodeHello(const HelloMessage& hello);
// False (with the reason) if `body` is malformed or its private data exceeds `max_private`.
bool DecodeHello(ByteSpan body, size_t max_private, HelloMessage* hello, std::string* error);

std::vector<uint8_t> EncodeAccept(const AcceptMessage& accept);
bool DecodeAccept(ByteSpan body, size_t max_private, AcceptMessage* accept, std::string* error);

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CONNECT_MESSAGES_H_
