// raw_handshake.h -- a valid handshake between a raw peer (raw_peer.h, raw_shm_peer.h) and a
// server that accepts it with its region's descriptor as private data, for the tests of
// what such a peer may then do (hostile_peer_test, hostile_direct_area_test).
#ifndef RPMA_SIM_TESTS_INTEGRATION_RAW_HANDSHAKE_H_
#define RPMA_SIM_TESTS_INTEGRATION_RAW_HANDSHAKE_H_

#include <librpma.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "tests/integration/raw_peer.h"

namespace raw_peer {

// What the server's ACCEPT told the peer.
struct Accepted {
  uint64_t address = 0;  // the server's region, from its descriptor
  uint64_t length = 0;
  uint32_t rkey = 0;
  bool took_segment = false;  // the server took the peer's shared-memory offer
};

// The server's side before a raw peer connects: its log lines kept (tests/common/kept_log.h,
// forgotten first), a peer, and an endpoint listening on a free loopback port. Asserted: use
// with ASSERT_NO_FATAL_FAILURE.
void ListeningServer(rpma_peer** peer, rpma_ep** ep, std::string* port);

// The peer on `wire` (connected to the port of the server's endpoint `ep`) sends a HELLO with
// `offer` (ShmPeer::Offer(), or {0}: none); the server accepts the request into *conn with
// `mr`'s descriptor as private data; the peer reads the ACCEPT into *accepted. Neither side
// is established yet: a peer whose offer was taken moves to its rings (ShmPeer::UseRings)
// first. Asserted: use with ASSERT_NO_FATAL_FAILURE.
void AcceptedHandshake(PeerWire* wire, const std::vector<uint8_t>& offer, rpma_ep* ep,
                       const rpma_mr_local* mr, rpma_conn** conn, Accepted* accepted);

}  // namespace raw_peer

#endif  // RPMA_SIM_TESTS_INTEGRATION_RAW_HANDSHAKE_H_
