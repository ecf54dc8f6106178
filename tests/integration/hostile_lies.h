// hostile_lies.h -- what a hostile peer tells a server after a valid handshake, for
// hostile_peer_test: each lie is the bytes it sends (frames by hand, raw_peer.h), what the
// server must answer or the log line it must close the connection with, what valid requests
// among the lies must have left in the region, and over shared memory what the peer does to
// the segment first (raw_shm_peer.h).
#ifndef RPMA_SIM_TESTS_INTEGRATION_HOSTILE_LIES_H_
#define RPMA_SIM_TESTS_INTEGRATION_HOSTILE_LIES_H_

#include <infiniband/verbs.h>
#include <stdint.h>

#include <functional>
#include <vector>

#include "tests/integration/raw_peer.h"
#include "tests/integration/raw_shm_peer.h"

namespace hostile {

// The server's region: 4 KiB between guard pages, filled with kFill before each case.
constexpr uint64_t kRegionSize = 4096;
constexpr uint8_t kFill = 0xA5;

// What the server's region descriptor told the peer.
struct Target {
  uint64_t address = 0;
  uint64_t length = 0;
  uint32_t rkey = 0;
};

struct Lie {
  const char* name;
  // The bytes the peer sends after the handshake.
  std::function<std::vector<uint8_t>(const Target&)> bytes;
  // The statuses of the RESPONSE frames it must get back, in order.
  std::vector<ibv_wc_status> answers;
  // Not null: the simulator must then close the connection (a frame the protocol does not
  // allow), with a log line that says this. Null: it keeps serving it, and the peer hangs up.
  const char* closed_logging;
  // What valid requests among the lies wrote at the region's start (nothing: empty).
  std::vector<uint8_t> landed;
  // False: the peer reads nothing more after its lie, so only the server application's
  // RPMA_CONN_LOST tells that the simulator ended the connection.
  bool peer_reads = true;
  // Over TCP only: over shared memory the protocol allows it.
  bool tcp_only = false;
  // Over shared memory only: what the peer does to the segment before it sends the bytes.
  std::function<void(raw_peer::ShmPeer&)> scribble;
};

// A valid 8-byte write of `byte` at `offset` into the region, with its sequence number.
raw_peer::Request WriteOf(const Target& t, uint64_t sequence, uint64_t offset, uint8_t byte);

// `r` as a REQUEST frame.
std::vector<uint8_t> RequestFrame(const raw_peer::Request& r);

// Every lie, each run over TCP and over shared memory unless it says otherwise.
std::vector<Lie> AllLies();

}  // namespace hostile

#endif  // RPMA_SIM_TESTS_INTEGRATION_HOSTILE_LIES_H_
