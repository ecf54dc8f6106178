// connection_tag.h -- what a queue pair knows of the connection it belongs to, for the seams.
//
// The connection manager tags a queue pair when its connection is established: which of this
// process's connections it is, on which side, since when, and how to lose it. A gate
// (stage_gate.h) reads the tag to decide by connection, side and time; a queue pair that
// was never connected has the default tag (ordinal 0).
#ifndef RPMA_SIM_VERBS_CONNECTION_TAG_H_
#define RPMA_SIM_VERBS_CONNECTION_TAG_H_

#include <stdint.h>

#include <chrono>
#include <memory>

#include "sim/fabric/node.h"

namespace rpma_sim {

// Which end of a connection: where it was made (the client) or where it arrived (the server).
enum class ConnectionSide { kClient, kServer };

inline const char* SideName(ConnectionSide side) {
  return side == ConnectionSide::kServer ? "server" : "client";
}

struct ConnectionTag {
  // The Nth connection established on its side in this process (from 1; the client and the
  // server side are counted apart), 0 for none.
  uint64_t ordinal = 0;
  ConnectionSide side = ConnectionSide::kClient;
  std::chrono::steady_clock::time_point established;
  // How long the requester retries before it gives up (rpma_conn_cfg_set_timeout).
  int timeout_ms = 1000;
  // Failing it loses the connection on both sides (what a failing node does to it).
  std::weak_ptr<NodeMember> connection;
  // The two nodes it links: this side's and the other's (0: not known). Every connection
  // between the same two nodes shares the link (a partition cuts them all).
  struct Link {
    uint64_t local = 0;
    uint64_t remote = 0;
    bool operator<(const Link& other) const {
      return local != other.local ? local < other.local : remote < other.remote;
    }
  };
  Link link;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_CONNECTION_TAG_H_
