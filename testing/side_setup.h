// side_setup.h -- the steps that set up and take down one side of the kit's connected pair,
// the same for the server in the test's process and in a child: a peer, a free port, the
// connection's configuration, a registered region, descriptors as text for the child's line
// protocol, and the end of a connection.
#ifndef RPMA_SIM_TESTING_SIDE_SETUP_H_
#define RPMA_SIM_TESTING_SIDE_SETUP_H_

#include <librpma.h>

#include <functional>
#include <string>

#include "rpma_sim/testing.h"

namespace rpma_sim {
namespace testing {

constexpr char kLoopback[] = "127.0.0.1";

// A peer on the simulated device of 127.0.0.1. Use with ASSERT_NO_FATAL_FAILURE.
void NewPeer(rpma_peer** peer);

// A TCP port of 127.0.0.1 that was free a moment ago (bind to port 0, getsockname), or "".
std::string FreeTcpPort();

// The connection configuration `options` asks for (NULL when it keeps every default): owned
// by the caller (rpma_conn_cfg_delete). Use with ASSERT_NO_FATAL_FAILURE.
void NewConnCfg(const PairOptions& options, rpma_conn_cfg** cfg);

// A connection made from a request: make(cfg, &request) makes it under the configuration
// `options` asks for (rpma_conn_req_new on the client, rpma_ep_next_conn_req on the server),
// then rpma_conn_req_connect with `private_data` (none if empty) gives *conn.
// Use with ASSERT_NO_FATAL_FAILURE.
void ConnectRequest(const PairOptions& options,
                    const std::function<int(const rpma_conn_cfg*, rpma_conn_req**)>& make,
                    const std::string& private_data, rpma_conn** conn);

// Allocates side->memory (page-aligned, zeroed), registers it with `usage`, and fills in the
// connection's completion queues. Use with ASSERT_NO_FATAL_FAILURE.
void RegisterMemory(Side* side, size_t size, int usage);

// The descriptor of side->mr, as hex.
void DescribeMemory(const Side& side, std::string* hex);
// side->remote from the other side's descriptor in hex. Use with ASSERT_NO_FATAL_FAILURE.
void LearnRemote(Side* side, const std::string& hex);

// The server's peer configuration with direct write to pmem on, as hex.
void DescribePeerCfg(std::string* hex);
// Applies the server's peer configuration (hex) to the client's connection.
void ApplyPeerCfg(rpma_conn* conn, const std::string& hex);

// Ends side->conn unless the kit saw it end: rpma_conn_disconnect, then CLOSED or LOST.
// Use with ASSERT_NO_FATAL_FAILURE.
void EndConnection(Side* side);

// Frees what a side holds (each call expected to return 0 when `check`; quietly otherwise),
// except the peer; the memory last. The connection must have ended.
void ReleaseSide(Side* side, bool check);

}  // namespace testing
}  // namespace rpma_sim

#endif  // RPMA_SIM_TESTING_SIDE_SETUP_H_
