// test_support.h -- API-test helpers: free TCP ports, fd readiness, a connected client/server pair.
#ifndef RPMA_SIM_TESTS_COMMON_TEST_SUPPORT_H_
#define RPMA_SIM_TESTS_COMMON_TEST_SUPPORT_H_

#include <librpma.h>

#include <string>

// The longest any helper waits for something the simulator should deliver promptly. It is only a
// safety net: a broken implementation makes the test fail after this long instead of hanging.
constexpr int kSafetyTimeoutMs = 10000;

// The address every test listens on and connects to.
constexpr const char kLoopback[] = "127.0.0.1";

// Returns a TCP port on 127.0.0.1 that was free a moment ago, as a decimal string: binds a socket
// to port 0, reads the port the kernel picked with getsockname(2) and closes the socket.
// Returns "" (and records a test failure) if any of those calls fails.
std::string FreeTcpPort();

// Waits up to timeout_ms for fd to become readable (poll(2), POLLIN). Returns false on timeout,
// on error, or if poll reports POLLERR/POLLHUP/POLLNVAL without POLLIN.
bool WaitReadable(int fd, int timeout_ms);

// True iff fd is readable right now (poll(2) with a zero timeout).
bool IsReadableNow(int fd);

// Adds O_NONBLOCK to fd's file status flags. Records a fatal failure if fcntl(2) fails;
// call it with ASSERT_NO_FATAL_FAILURE.
void SetNonBlocking(int fd);

// Creates a peer on the simulated device of 127.0.0.1 (rpma_utils_get_ibv_context LOCAL +
// rpma_peer_new). Use with ASSERT_NO_FATAL_FAILURE.
void NewLocalPeer(rpma_peer **peer_ptr);

// Waits (safety net: kSafetyTimeoutMs) until the endpoint's fd is readable, then takes the next
// request with rpma_ep_next_conn_req and asserts it returned 0. Use with ASSERT_NO_FATAL_FAILURE.
void NextConnReq(rpma_ep *ep, const rpma_conn_cfg *cfg, rpma_conn_req **req_ptr);

// Waits (safety net) until the connection's event fd is readable, then calls rpma_conn_next_event
// and asserts it returned 0. Use with ASSERT_NO_FATAL_FAILURE.
void NextEvent(rpma_conn *conn, rpma_conn_event *event);

// NextEvent, and asserts the event is `expected`. Use with ASSERT_NO_FATAL_FAILURE.
void ExpectNextEvent(rpma_conn *conn, rpma_conn_event expected);

// Asserts that no event is pending on the connection right now (its event fd is not readable).
void ExpectNoPendingEvent(rpma_conn *conn);

// What ConnectOnce and ConnectedPair::Connect use; every pointer may be NULL.
struct PairOptions {
  const rpma_conn_cfg *client_cfg = nullptr;  // passed to rpma_conn_req_new
  const rpma_conn_cfg *server_cfg = nullptr;  // passed to rpma_ep_next_conn_req
  const rpma_conn_private_data *client_pdata = nullptr;  // client's rpma_conn_req_connect
  const rpma_conn_private_data *server_pdata = nullptr;  // server's rpma_conn_req_connect
};

// Connects a new client of `peer` to the endpoint `ep` listening on 127.0.0.1:port, in one thread:
// rpma_conn_req_new + rpma_conn_req_connect on the client, rpma_ep_next_conn_req +
// rpma_conn_req_connect on the server, then ESTABLISHED on both. Every return code is asserted;
// on success *client and *server hold the two connections. Use with ASSERT_NO_FATAL_FAILURE.
void ConnectOnce(rpma_peer *peer, rpma_ep *ep, const std::string &port, const PairOptions &options,
                 rpma_conn **client, rpma_conn **server);

// `first` disconnects; both connections see exactly one CLOSED; `second` then disconnects too
// (which must return 0) and both are deleted (set to NULL). Use with ASSERT_NO_FATAL_FAILURE.
void DisconnectAndDelete(rpma_conn **first, rpma_conn **second);

// A peer, an endpoint listening on 127.0.0.1:<free port>, and (after Connect) one established
// connection on each side. Not copyable. Typical use:
//
//   ConnectedPair pair;
//   ASSERT_NO_FATAL_FAILURE(pair.Connect());
//   ... use pair.client and pair.server ...
//   ASSERT_NO_FATAL_FAILURE(pair.Teardown());
//
// A test may take over any member (do its own teardown) as long as it sets the member to NULL.
class ConnectedPair {
 public:
  ConnectedPair() = default;
  ConnectedPair(const ConnectedPair &) = delete;
  ConnectedPair &operator=(const ConnectedPair &) = delete;

  // Best-effort release of whatever Teardown did not release, without assertions (for tests that
  // stopped at a failed assertion).
  ~ConnectedPair();

  // Creates the peer and the listening endpoint, unless they exist already.
  // Use with ASSERT_NO_FATAL_FAILURE.
  void Listen();

  // Listen(), then ConnectOnce into client and server. Use with ASSERT_NO_FATAL_FAILURE.
  void Connect(const PairOptions &options = PairOptions());

  // If both connections exist (they must still be established): the client disconnects, both see
  // CLOSED, both are deleted. A connection that exists alone is just deleted. Then the endpoint
  // is shut down and the peer deleted. Every return code is asserted.
  // Use with ASSERT_NO_FATAL_FAILURE.
  void Teardown();

  rpma_peer *peer = nullptr;
  rpma_ep *ep = nullptr;
  std::string port;
  rpma_conn *client = nullptr;
  rpma_conn *server = nullptr;
};

#endif  // RPMA_SIM_TESTS_COMMON_TEST_SUPPORT_H_
