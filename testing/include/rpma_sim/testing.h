// rpma_sim/testing.h -- a GoogleTest kit for testing code written against librpma on rpma-sim:
// a connected client/server pair in one line, on each transport; waits for completions and
// connection events that say what came instead; fault rules for a scope; a sweep of librpma's
// fault points; power failure of the server and a check of what survived; every crash state
// of the server's memory judged by the test's recovery code.
//
// It uses only the public C API (<librpma.h>, <rpma_sim.h>) and GoogleTest. In a Bazel tree:
// deps = ["//testing:rpma_sim_testing"]; installed: pkg-config rpma-sim-testing. A test:
//
//   class WriteTest : public rpma_sim::testing::PairTest {};
//
//   TEST_P(WriteTest, WritesIntoTheServersMemory) {
//     ASSERT_NO_FATAL_FAILURE(Connect());
//     memcpy(client().memory, "hello", 6);
//     ASSERT_EQ(0, rpma_write(client().conn, client().remote, 0, client().mr, 0, 6,
//                             RPMA_F_COMPLETION_ALWAYS, nullptr));
//     ASSERT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
//     EXPECT_BYTES_EQ(server().memory, "hello", 6);
//   }
//
//   INSTANTIATE_RPMA_SIM_TRANSPORTS(WriteTest);  // WriteTest.WritesIntoTheServersMemory/inproc ...
//
// Every wait has a safety-net timeout (10 s by default, SetTimeoutMs): a test never sleeps to
// wait for something, and a broken program fails instead of hanging.
#ifndef RPMA_SIM_TESTING_H_
#define RPMA_SIM_TESTING_H_

#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace rpma_sim {
namespace testing {

class TestChild;

// ---------------------------------------------------------------------------------------------
// Timeouts

// The longest any wait of the kit lasts (default 10000 ms). Only a safety net.
int TimeoutMs();
// Changes it for the waits that start afterwards (ms > 0).
void SetTimeoutMs(int ms);

// ---------------------------------------------------------------------------------------------
// Completions and connection events

// Names as <infiniband/verbs.h> spells them ("IBV_WC_RDMA_WRITE", "IBV_WC_WR_FLUSH_ERR"), or
// the number for a value it does not have.
std::string OpcodeName(ibv_wc_opcode opcode);
std::string StatusName(ibv_wc_status status);
// "IBV_WC_RDMA_WRITE IBV_WC_SUCCESS wr_id 0x1 byte_len 6" (the opcode only on success, where
// ibverbs defines it).
std::string Describe(const ibv_wc& wc);

// Polls cq (rpma_cq_get_wc of one) until a completion arrives or timeout_ms passes. Returns 0
// (*wc filled), RPMA_E_NO_COMPLETION on timeout, or the error rpma_cq_get_wc returned.
int NextCompletion(rpma_cq* cq, ibv_wc* wc, int timeout_ms = TimeoutMs());

// The last completion a completion assertion of this thread took (all zero before any).
const ibv_wc& LastCompletion();

// Takes the next completion of cq and checks its status and, if the status is IBV_WC_SUCCESS
// (the only case where ibverbs defines it), its opcode; with wr_id, that too. On a mismatch
// the message names what came instead (Describe), or that nothing came within the timeout.
::testing::AssertionResult CompletionIs(const char* cq_expr, const char* opcode_expr,
                                        const char* status_expr, rpma_cq* cq, ibv_wc_opcode opcode,
                                        ibv_wc_status status);
::testing::AssertionResult CompletionWithIdIs(const char* cq_expr, const char* wr_id_expr,
                                              const char* opcode_expr, const char* status_expr,
                                              rpma_cq* cq, uint64_t wr_id, ibv_wc_opcode opcode,
                                              ibv_wc_status status);

// Waits (the timeout) for the connection's next event and takes it with rpma_conn_next_event.
// Returns RPMA_E_NO_EVENT on timeout, else what rpma_conn_next_event returned.
int NextConnEvent(rpma_conn* conn, rpma_conn_event* event, int timeout_ms = TimeoutMs());

// Takes the connection's next event and checks it; the message names the event that came
// instead ("RPMA_CONN_LOST (Connection lost)") or says none came.
::testing::AssertionResult ConnEventIs(const char* conn_expr, const char* event_expr,
                                       rpma_conn* conn, rpma_conn_event event);

// Whether the kit has taken an event that ends conn (CLOSED, LOST, REJECTED, UNREACHABLE)
// since conn was made; ForgetConnection(conn) before deleting a connection the kit saw.
bool ConnectionEnded(const rpma_conn* conn);
void ForgetConnection(const rpma_conn* conn);

#define EXPECT_COMPLETION(cq, opcode, status) \
  EXPECT_PRED_FORMAT3(::rpma_sim::testing::CompletionIs, cq, opcode, status)
#define ASSERT_COMPLETION(cq, opcode, status) \
  ASSERT_PRED_FORMAT3(::rpma_sim::testing::CompletionIs, cq, opcode, status)
#define EXPECT_COMPLETION_ID(cq, wr_id, opcode, status) \
  EXPECT_PRED_FORMAT4(::rpma_sim::testing::CompletionWithIdIs, cq, wr_id, opcode, status)
#define ASSERT_COMPLETION_ID(cq, wr_id, opcode, status) \
  ASSERT_PRED_FORMAT4(::rpma_sim::testing::CompletionWithIdIs, cq, wr_id, opcode, status)
#define EXPECT_CONN_EVENT(conn, event) \
  EXPECT_PRED_FORMAT2(::rpma_sim::testing::ConnEventIs, conn, event)
#define ASSERT_CONN_EVENT(conn, event) \
  ASSERT_PRED_FORMAT2(::rpma_sim::testing::ConnEventIs, conn, event)

// ---------------------------------------------------------------------------------------------
// Memory

// Whether [actual, actual + n) holds [expected, expected + n); the message gives how many
// bytes differ and the first few offsets with both values.
::testing::AssertionResult BytesEqual(const char* actual_expr, const char* expected_expr,
                                      const char* n_expr, const void* actual, const void* expected,
                                      size_t n);

#define EXPECT_BYTES_EQ(actual, expected, n) \
  EXPECT_PRED_FORMAT3(::rpma_sim::testing::BytesEqual, actual, expected, n)
#define ASSERT_BYTES_EQ(actual, expected, n) \
  ASSERT_PRED_FORMAT3(::rpma_sim::testing::BytesEqual, actual, expected, n)

// A power failure of the node `peer` is (rpma_sim_power_failure), expected to succeed; a
// failure message names the seed the torn modes drew from. The peer must have been armed
// (PairOptions::arm_power_failure) unless mode is RPMA_SIM_LOSS_NONE. Both sides'
// connections are lost afterwards (RPMA_CONN_LOST). Use with ASSERT_NO_FATAL_FAILURE.
void PowerFail(rpma_peer* peer, rpma_sim_loss mode);

// ---------------------------------------------------------------------------------------------
// Fault rules for a scope

// Puts rules (rpma_sim_fault_add; ';'-separated) in force for the life of the object, and,
// for as long, adds "RPMA_SIM_SEED=S replays the fault choices" to every failure message
// (a ScopedTrace at the caller's line). The destructor removes every rule of the process
// (rpma_sim_fault_clear): scopes do not nest. A rule that is not understood is a failure.
class ScopedFaults {
 public:
  explicit ScopedFaults(const std::string& rules, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE());
  ~ScopedFaults();

  ScopedFaults(const ScopedFaults&) = delete;
  ScopedFaults& operator=(const ScopedFaults&) = delete;

  // How many times rules fired since the constructor.
  uint64_t fired() const;
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t fired_before_;
  ::testing::ScopedTrace trace_;
};

// ---------------------------------------------------------------------------------------------
// A connected client/server pair

// One side of a connection and what the pair set up for it.
struct Side {
  rpma_peer* peer = nullptr;
  rpma_conn* conn = nullptr;
  rpma_cq* cq = nullptr;             // the main completion queue
  rpma_cq* rcq = nullptr;            // the receive completion queue (rcq_size > 0), or NULL
  uint8_t* memory = nullptr;         // the registered region, page-aligned, zeroed
  size_t size = 0;                   // its size in bytes
  rpma_mr_local* mr = nullptr;       // its registration
  rpma_mr_remote* remote = nullptr;  // the other side's region, from its descriptor
};

// What Connect sets up. The defaults: librpma's queue sizes, no private data, 4 KiB regions
// registered for every usage, the server in the test's own process.
struct PairOptions {
  // Queue sizes of both sides' rpma_conn_cfg; 0 keeps librpma's default.
  uint32_t sq_size = 0, rq_size = 0, cq_size = 0, rcq_size = 0;
  // Private data of the client's connect (56 bytes at most) and the server's accept (196).
  std::string client_private_data, server_private_data;
  size_t client_region_size = 4096, server_region_size = 4096;
  int client_usage = kAllUsages, server_usage = kAllUsages;
  // The server tells the client (its rpma_peer_cfg descriptor, applied with
  // rpma_conn_apply_remote_peer_cfg) that it supports direct write to pmem.
  bool direct_write_to_pmem = false;
  // The server's peer is armed for a power failure (rpma_sim_power_failure_arm) before any
  // remote write, so PowerFail can revert what was not durable.
  bool arm_power_failure = false;
  // The server runs in a child process (the test binary run again for this test only, as
  // gtest's thread-safe death tests do: the test's code before Connect runs there too). The
  // test's process holds the client; server() is empty. Needs shm, tcp or auto (over inproc
  // Connect fails at once, saying so).
  bool server_in_child = false;
  // The server's code (server_main) runs on a thread of the test's process, at the same time
  // as the test body, which drives the client; server() is the server's side as usual, but
  // the test body should leave its connection and queues to that thread.
  bool server_in_thread = false;
  // Once the pair is connected, the server's code: in the child (server_in_child) or on its
  // thread (server_in_thread). In the child, when it returns, the child waits for the
  // connection to end (the client's teardown disconnects), cleans up and exits; a failure in
  // it fails the test in the parent, whose log has the child's output. On a thread, a failure
  // fails the test directly; Teardown waits (the timeout) for it to return before it ends the
  // connection, and if it does not, fails and disconnects both sides, which ends its waits.
  std::function<void(Side& server)> server_main;

  static constexpr int kAllUsages =
      RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
      RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
      RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV;
};

// Two peers (two fabric nodes), a listener on 127.0.0.1 at a free port, one established
// connection, a registered region on each side and each side's view of the other's. Not
// copyable. Teardown (or the destructor, quietly) ends the connection and frees everything.
class ConnectedPair {
 public:
  ConnectedPair();
  ~ConnectedPair();

  ConnectedPair(const ConnectedPair&) = delete;
  ConnectedPair& operator=(const ConnectedPair&) = delete;

  // Sets everything up as `options` says; every call is asserted. In a server child process
  // it does not return: it serves and exits. Use with ASSERT_NO_FATAL_FAILURE.
  void Connect(const PairOptions& options = PairOptions());

  // Disconnects what has not ended (waiting for CLOSED or LOST on each side), deletes the
  // connections, regions, listener and peers; with a server child, reaps it and fails if it
  // failed. Every call is asserted. Use with ASSERT_NO_FATAL_FAILURE.
  void Teardown();

  Side& client() { return client_; }
  Side& server() { return server_; }  // empty when the server runs in a child
  const std::string& port() const { return port_; }

 private:
  void ConnectInProcess(const PairOptions& options);
  void ConnectToChild(const PairOptions& options);
  void Serve(const PairOptions& options, int fd);
  void Listen();
  void Accept(const PairOptions& options);
  void ClientConnect(const PairOptions& options);
  // Teardown's first step with a server thread: waits for server_main to return.
  void JoinServerThread();

  Side client_;
  Side server_;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  std::unique_ptr<TestChild> child_;  // the server's process, if it has its own
  std::future<void> server_thread_;   // server_main on its thread, if it has one
};

// The transports a TEST_P runs on.
::testing::internal::ParamGenerator<rpma_sim_transport> AllTransports();
// shm and tcp: for a server in a child process.
::testing::internal::ParamGenerator<rpma_sim_transport> ProcessTransports();
// "inproc", "shm", "tcp" (and "auto").
std::string TransportName(const ::testing::TestParamInfo<rpma_sim_transport>& info);

// A fixture over the transports: SetUp makes GetParam() the transport of the connections
// made (rpma_sim_set_transport); TearDown tears the pair down and puts the transport back.
class PairTest : public ::testing::TestWithParam<rpma_sim_transport> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // pair_.Connect(options). Use with ASSERT_NO_FATAL_FAILURE.
  void Connect(const PairOptions& options = PairOptions()) { pair_.Connect(options); }

  Side& client() { return pair_.client(); }
  Side& server() { return pair_.server(); }

  ConnectedPair pair_;

 private:
  rpma_sim_transport previous_ = RPMA_SIM_TRANSPORT_AUTO;
};

#define INSTANTIATE_RPMA_SIM_TRANSPORTS(suite)                                      \
  INSTANTIATE_TEST_SUITE_P(Transports, suite, ::rpma_sim::testing::AllTransports(), \
                           ::rpma_sim::testing::TransportName)
#define INSTANTIATE_RPMA_SIM_PROCESS_TRANSPORTS(suite)                                  \
  INSTANTIATE_TEST_SUITE_P(Transports, suite, ::rpma_sim::testing::ProcessTransports(), \
                           ::rpma_sim::testing::TransportName)

// ---------------------------------------------------------------------------------------------
// A sweep of librpma's fault points

// How one run of a swept body ended.
enum class PointOutcome {
  kPassed,   // the body ran to its end without a failure (the fault was handled)
  kFailed,   // a gtest expectation or assertion of the body failed
  kCrashed,  // the child died of a signal
  kHung,     // the child did not finish within the timeout and was killed
  kExited,   // the child exited (exit(), not a signal) before the body returned
};

const char* PointOutcomeName(PointOutcome outcome);

struct PointResult {
  int64_t point = 0;
  std::string function;  // the librpma function whose point failed ("" if none fired)
  std::string error;     // the error it injected (rpma_err_2str)
  PointOutcome outcome = PointOutcome::kPassed;
  std::string detail;  // the signal, exit status, or the end of the child's output
};

struct SweepOptions {
  int timeout_ms = 10000;   // per run; a run that takes longer has hung
  int64_t first_point = 1;  // the first point to fail
  int64_t max_points = 5000;
};

// Runs body once per librpma fault point, N = first_point, first_point + 1, ..., each in a
// child process (the test binary run again for this test only; the code before the sweep
// runs there too) where the Nth point passed inside body fails (rpma_sim_fault_point_set),
// until a run passes no failing point. Prints a table of point, function, error and outcome,
// and records one failure listing every point that crashed, hung, failed an expectation or
// exited. Returns one result per run. In the child it runs body, reports and exits.
std::vector<PointResult> SweepFaultPoints(const std::function<void()>& body,
                                          const SweepOptions& options = SweepOptions());

// ---------------------------------------------------------------------------------------------
// Crash states of the server's persistent memory (docs/crash-states.md)

struct CrashSweepOptions {
  // How the pair is set up. The server runs in the test's process (server_in_child and
  // server_in_thread are not for a sweep); its peer records its crash points.
  PairOptions pair;
  bool words = false;       // the torn states by 8-byte words too
  bool lines = false;       // and by 64-byte lines
  unsigned samples = 0;     // per point and torn mode: seeded subsets besides each unit alone
  uint64_t seed = 1;        // the first subset's seed
  uint64_t max_states = 0;  // 0: every state
  int timeout_ms = 10000;   // per run of recover; a run that takes longer has hung
  bool print = true;        // print the table of states (the failing ones are always printed)
};

struct CrashStateResult {
  uint64_t point = 0;  // power fails just before this crash point of the server's node
  std::string event;   // what the point is
  rpma_sim_loss loss = RPMA_SIM_LOSS_ALL;
  std::string reverted;   // what of the bytes not durable reverted
  std::string rule;       // the power_failure rule that makes an ordinary run fail there
                          // ("" after the last point: rpma_sim_power_failure at the end)
  uint64_t seed = 0;      // with this RPMA_SIM_SEED (rpma_sim_fault_set_seed), or 0
  bool recovered = true;  // recover ran to its end without a failure
  std::string failure;    // else what it reported, or how its process ended
};

struct CrashSweepSummary {
  uint64_t points = 0;      // crash points of the server's node during the workload
  uint64_t states = 0;      // states recover judged
  uint64_t duplicates = 0;  // states skipped: their image equals one judged before
  uint64_t failed = 0;
  std::vector<std::string> lint;          // the flushes' findings (rpma_sim_crash_lint)
  std::vector<CrashStateResult> results;  // one per state judged
};

// Connects a pair (options.pair), has the server's peer record its crash points while
// `workload` drives the pair (it waits for what it needs to complete), then gives every
// crash state of the server's region to `recover`: memory is a copy of server().memory as
// it would be after a power failure just before that point (loss mode all; torn states too
// if asked), and recover fails with gtest expectations. Each run of recover is in a child
// process (forked once and reused; again after one crashes or hangs), so that a crash or a
// hang in recovery code is a result, not the end of the test. Prints the table of states,
// the lint, and for each failing state its replay line; records one failure naming every
// failing state, and one if the recording was cut short at the journal's limit (256 MiB, the
// region counted whole: a larger region is never explored). Use with ASSERT_NO_FATAL_FAILURE
// for the setup's own failures.
CrashSweepSummary SweepCrashStates(const std::function<void(ConnectedPair& pair)>& workload,
                                   const std::function<void(uint8_t* memory, size_t size)>& recover,
                                   const CrashSweepOptions& options = CrashSweepOptions());

}  // namespace testing
}  // namespace rpma_sim

#endif  // RPMA_SIM_TESTING_H_
