// test_support.h -- API-test helpers: free TCP ports, fd readiness, a connected client/server pair,
// completions, registered memory.
#ifndef RPMA_SIM_TESTS_COMMON_TEST_SUPPORT_H_
#define RPMA_SIM_TESTS_COMMON_TEST_SUPPORT_H_

#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
void NewLocalPeer(rpma_peer** peer_ptr);

// Waits (safety net: kSafetyTimeoutMs) until the endpoint's fd is readable, then takes the next
// request with rpma_ep_next_conn_req and asserts it returned 0. Use with ASSERT_NO_FATAL_FAILURE.
void NextConnReq(rpma_ep* ep, const rpma_conn_cfg* cfg, rpma_conn_req** req_ptr);

// Waits (safety net) until the connection's event fd is readable, then calls rpma_conn_next_event
// and asserts it returned 0. Use with ASSERT_NO_FATAL_FAILURE.
void NextEvent(rpma_conn* conn, rpma_conn_event* event);

// NextEvent, and asserts the event is `expected`. Use with ASSERT_NO_FATAL_FAILURE.
void ExpectNextEvent(rpma_conn* conn, rpma_conn_event expected);

// Asserts that no event is pending on the connection right now (its event fd is not readable).
void ExpectNoPendingEvent(rpma_conn* conn);

// What ConnectOnce and ConnectedPair::Connect use; every pointer may be NULL.
struct PairOptions {
  const rpma_conn_cfg* client_cfg = nullptr;             // passed to rpma_conn_req_new
  const rpma_conn_cfg* server_cfg = nullptr;             // passed to rpma_ep_next_conn_req
  const rpma_conn_private_data* client_pdata = nullptr;  // client's rpma_conn_req_connect
  const rpma_conn_private_data* server_pdata = nullptr;  // server's rpma_conn_req_connect
};

// The client's half of ConnectOnce: rpma_conn_req_new towards 127.0.0.1:port with `cfg` and
// rpma_conn_req_connect with `pdata` (both may be NULL), every result asserted; *client is the
// new connection. Use with ASSERT_NO_FATAL_FAILURE.
void ClientConnect(rpma_peer* peer, const std::string& port, const rpma_conn_cfg* cfg,
                   const rpma_conn_private_data* pdata, rpma_conn** client);

// Connects a new client of `peer` to the endpoint `ep` listening on 127.0.0.1:port, in one thread:
// rpma_conn_req_new + rpma_conn_req_connect on the client, rpma_ep_next_conn_req +
// rpma_conn_req_connect on the server, then ESTABLISHED on both. Every return code is asserted;
// on success *client and *server hold the two connections. Use with ASSERT_NO_FATAL_FAILURE.
void ConnectOnce(rpma_peer* peer, rpma_ep* ep, const std::string& port, const PairOptions& options,
                 rpma_conn** client, rpma_conn** server);

// `first` disconnects; both connections see exactly one CLOSED; `second` then disconnects too
// (which must return 0) and both are deleted (set to NULL). Use with ASSERT_NO_FATAL_FAILURE.
void DisconnectAndDelete(rpma_conn** first, rpma_conn** second);

// Deletes whatever connection is left of a pair, for a fixture's TearDown: unless the test has
// already failed, two established connections disconnect and are deleted as
// DisconnectAndDelete does; then any connection still there is deleted (expecting 0).
void CloseConnections(rpma_conn** first, rpma_conn** second);

// ---------------------------------------------------------------------------------------------
// Completions

// An op_context that comes back as wc.wr_id == n.
inline const void* Ctx(uintptr_t n) { return reinterpret_cast<const void*>(n); }

// Polls `cq` (rpma_cq_get_wc, one at a time) until a completion arrives or kSafetyTimeoutMs
// passes. Returns the last result: 0 (and *wc filled), RPMA_E_NO_COMPLETION on timeout, or the
// error rpma_cq_get_wc returned. *wc is zeroed first.
int WaitWc(rpma_cq* cq, ibv_wc* wc);

// WaitWc that asserts a completion arrived ("no completion arrived" on timeout).
// Use with ASSERT_NO_FATAL_FAILURE.
void PollOne(rpma_cq* cq, ibv_wc* wc);

// Expects that no completion is pending on `cq` right now.
void ExpectNoCompletion(rpma_cq* cq);

// Polls one completion and expects its wr_id and status and, for a successful one, its opcode.
// If `out` is not NULL it gets the completion. Use with ASSERT_NO_FATAL_FAILURE.
void ExpectCompletion(rpma_cq* cq, uint64_t wr_id, ibv_wc_status status, ibv_wc_opcode opcode,
                      ibv_wc* out = nullptr);

// The same for a completion that must be successful.
void ExpectCompletion(rpma_cq* cq, uint64_t wr_id, ibv_wc_opcode opcode);

// ExpectCompletion that also expects the completion to come from queue pair `qp_num`.
// Use with ASSERT_NO_FATAL_FAILURE.
void ExpectQpCompletion(rpma_cq* cq, uint32_t qp_num, const void* ctx, ibv_wc_status status,
                        ibv_wc_opcode opcode);

// The connection's main CQ, receive CQ (NULL if it has none) and queue-pair number; each getter
// is expected to return 0.
rpma_cq* MainCq(rpma_conn* conn);
rpma_cq* Rcq(rpma_conn* conn);
uint32_t QpNum(rpma_conn* conn);

// ---------------------------------------------------------------------------------------------
// Memory

// The remote view of `mr`, decoded from its descriptor as a client would
// (rpma_mr_get_descriptor_size, rpma_mr_get_descriptor, rpma_mr_remote_from_descriptor; every
// call asserted). If `desc` is not NULL it gets the descriptor. Use with ASSERT_NO_FATAL_FAILURE.
void RemoteFromDescriptor(const rpma_mr_local* mr, rpma_mr_remote** remote,
                          std::vector<uint8_t>* desc = nullptr);

// A buffer and the MR that registers it.
struct Buffer {
  std::vector<uint8_t> bytes;
  rpma_mr_local* mr = nullptr;
};

// Owns the MRs, remote MRs and buffers a test registers. Release() frees them, expecting every
// call to return 0; the destructor frees what is left without checking.
class Registrations {
 public:
  Registrations() = default;
  Registrations(const Registrations&) = delete;
  Registrations& operator=(const Registrations&) = delete;
  ~Registrations();

  // Registers [ptr, ptr + size) on `peer` (asserted) and keeps the MR.
  // Use with ASSERT_NO_FATAL_FAILURE.
  void Register(rpma_peer* peer, void* ptr, size_t size, int usage, rpma_mr_local** mr);

  // Keeps an MR or a remote MR made elsewhere, for Release().
  void Keep(rpma_mr_local* mr) { locals_.push_back(mr); }
  void Keep(rpma_mr_remote* remote) { remotes_.push_back(remote); }

  // Deregisters a kept MR now (asserted; *mr becomes NULL) and forgets it.
  // Use with ASSERT_NO_FATAL_FAILURE.
  void Deregister(rpma_mr_local** mr);

  // RemoteFromDescriptor, and keeps the remote MR. Use with ASSERT_NO_FATAL_FAILURE.
  void RemoteOf(const rpma_mr_local* mr, rpma_mr_remote** remote,
                std::vector<uint8_t>* desc = nullptr);

  // A new buffer of `size` bytes, each `fill`, registered with `usage` (a failure is recorded).
  Buffer* NewBuffer(rpma_peer* peer, size_t size, int usage, uint8_t fill);

  // The remote view of a buffer (NULL, with a failure recorded, if it cannot be made).
  rpma_mr_remote* RemoteOf(const Buffer* buffer);

  // Deletes the remote MRs, then deregisters the MRs (expecting 0 from each).
  void Release();

 private:
  std::vector<rpma_mr_remote*> remotes_;
  std::vector<rpma_mr_local*> locals_;
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

// Sets a device capability of the simulator for the scope and clears it again at the end.
class ScopedCap {
 public:
  explicit ScopedCap(rpma_sim_device_cap cap);
  ~ScopedCap();
  ScopedCap(const ScopedCap&) = delete;
  ScopedCap& operator=(const ScopedCap&) = delete;

 private:
  rpma_sim_device_cap cap_;
};

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
  ConnectedPair(const ConnectedPair&) = delete;
  ConnectedPair& operator=(const ConnectedPair&) = delete;

  // Best-effort release of whatever Teardown did not release, without assertions (for tests that
  // stopped at a failed assertion).
  ~ConnectedPair();

  // Creates the peer and the listening endpoint, unless they exist already.
  // Use with ASSERT_NO_FATAL_FAILURE.
  void Listen();

  // Listen(), then ConnectOnce into client and server. Use with ASSERT_NO_FATAL_FAILURE.
  void Connect(const PairOptions& options = PairOptions());

  // If both connections exist (they must still be established): the client disconnects, both see
  // CLOSED, both are deleted. A connection that exists alone is just deleted. Then the endpoint
  // is shut down and the peer deleted. Every return code is asserted.
  // Use with ASSERT_NO_FATAL_FAILURE.
  void Teardown();

  rpma_peer* peer = nullptr;
  rpma_ep* ep = nullptr;
  std::string port;
  rpma_conn* client = nullptr;
  rpma_conn* server = nullptr;
};

// A client connects to `ep` (listening on 127.0.0.1:port) and the server rejects it
// (rpma_conn_req_delete); the client sees REJECTED, disconnects first if `disconnect` (the result
// is not checked: librpma's example 01 does this) and is deleted. Use with ASSERT_NO_FATAL_FAILURE.
void ConnectAndGetRejected(rpma_peer* peer, rpma_ep* ep, const std::string& port, bool disconnect);

// Waits for a completion the way librpma's examples do: waits (safety net: kSafetyTimeoutMs)
// until the CQ's fd is readable, then rpma_cq_wait and rpma_cq_get_wc of one completion, each
// asserted to return 0. Use with ASSERT_NO_FATAL_FAILURE.
void WaitForCompletion(rpma_cq* cq, ibv_wc* wc);

// The pair's client writes `length` bytes of `source` into `mr` (a region of the pair's server
// side registered with `registrations`) from offset 0, as a peer that learned it from its
// descriptor; the completion must be a success. Then the region is deregistered (*mr NULL).
// Use with ASSERT_NO_FATAL_FAILURE.
void WriteThenDeregister(ConnectedPair& pair, Registrations& registrations, const Buffer& source,
                         rpma_mr_local** mr, size_t length);

// What every librpma destructor (rpma_*_delete, rpma_mr_dereg) does with a NULL object: returns
// 0 and leaves the pointer NULL.
template <typename T>
void ExpectDeleteOfNullObjectReturnsZero(int (*delete_fn)(T**)) {
  T* object = nullptr;
  EXPECT_EQ(0, delete_fn(&object));
  EXPECT_EQ(nullptr, object);
}

// A constructor that takes only the pointer (rpma_*_cfg_new) makes an object, and its
// destructor deletes it and sets the pointer to NULL. Use with ASSERT_NO_FATAL_FAILURE.
template <typename T>
void ExpectNewThenDeleteNulls(int (*new_fn)(T**), int (*delete_fn)(T**)) {
  T* object = nullptr;
  ASSERT_EQ(0, new_fn(&object));
  EXPECT_NE(nullptr, object);
  EXPECT_EQ(0, delete_fn(&object));
  EXPECT_EQ(nullptr, object);
}

// A fixture with a local peer and a free port (SetUp), and an endpoint after Listen().
// TearDown shuts the endpoint down and deletes the peer, expecting 0 from each.
class PeerFixture : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Listens on 127.0.0.1:port_ (asserted). Use with ASSERT_NO_FATAL_FAILURE.
  void Listen();

  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
};

// A fixture with a ConnectedPair, the Registrations of its memory and the connection
// configurations a test makes with NewCfg(). TearDown closes the connections
// (CloseConnections), releases the registrations, calls ReleaseMore(), deletes the
// configurations and, unless the test has failed, tears the pair down (after a failure the
// pair's destructor cleans up quietly).
class PairFixture : public ::testing::Test {
 protected:
  void TearDown() override;

  // What a fixture releases after the registrations and before the configurations.
  virtual void ReleaseMore() {}

  // A new connection configuration, deleted in TearDown (a failure is recorded if it cannot be
  // made).
  rpma_conn_cfg* NewCfg();

  // The same into *cfg, asserted. Use with ASSERT_NO_FATAL_FAILURE.
  void NewCfg(rpma_conn_cfg** cfg);

  // pair_.Connect(options), then the main CQ (not NULL) and the queue-pair number of each
  // connection, every getter asserted. Use with ASSERT_NO_FATAL_FAILURE.
  void ConnectPair(const PairOptions& options = PairOptions());

  // A buffer of `size` bytes, each `fill`, registered on the pair's peer (regs_.NewBuffer).
  Buffer* Register(size_t size, int usage, uint8_t fill) {
    return regs_.NewBuffer(pair_.peer, size, usage, fill);
  }

  // A SEND buffer of `size` bytes whose byte i is (seed + i * step), registered on the pair's
  // peer.
  Buffer* Source(size_t size, uint8_t seed, uint8_t step = 7);

  // The server posts a receive into dst at [recv_offset, recv_offset + recv_len) (wr_id
  // recv_id); the client sends `len` bytes of src from src_offset, signalled (wr_id send_id).
  // Use with ASSERT_NO_FATAL_FAILURE.
  void PostRecvAndSend(Buffer* dst, size_t recv_offset, size_t recv_len, uintptr_t recv_id,
                       Buffer* src, size_t src_offset, size_t len, uintptr_t send_id);

  // The server's receive completion on server_cq_ (into *recv_wc if not NULL), then the
  // client's send completion on client_cq_ (ExpectCompletion each).
  // Use with ASSERT_NO_FATAL_FAILURE.
  void ExpectRecvAndSend(uint64_t recv_id, ibv_wc_status recv_status, uint64_t send_id,
                         ibv_wc_status send_status, ibv_wc* recv_wc = nullptr);

  ConnectedPair pair_;
  Registrations regs_;
  std::vector<rpma_conn_cfg*> cfgs_;
  rpma_cq* client_cq_ = nullptr;  // set by ConnectPair
  rpma_cq* server_cq_ = nullptr;
  uint32_t client_qp_num_ = 0;
  uint32_t server_qp_num_ = 0;
};

#endif  // RPMA_SIM_TESTS_COMMON_TEST_SUPPORT_H_
