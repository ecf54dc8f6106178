// fault_injection_test.cc -- rules from code (rpma_sim_fault_add / _clear / _count): the
// grammar's refusals, and each kind (call, wc, delay, lose, reject, unreachable) with its
// selectors, over
// in-process connections and, like every API test, again over tcp and over shm.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <librpma.h>
#include <poll.h>
#include <rpma_sim.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/fault/fault_plan.h"
#include "tests/common/test_support.h"

namespace {

uint64_t Fired() {
  uint64_t fired = 0;
  EXPECT_EQ(0, rpma_sim_fault_count(&fired));
  return fired;
}

class FaultRulesTest : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(0, rpma_sim_fault_clear()); }
};

TEST_F(FaultRulesTest, MalformedRulesAreRefused) {
  uint64_t before = Fired();
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add(nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_count(nullptr));
  for (const char* rule : {
           "bogus:nth=1",
           "call",                                     // no err
           "call:fn=rpma_mr_reg,err=RPMA_E_NO_EVENT",  // rpma_mr_reg cannot return it
           "call:fn=rpma_no_such_function,err=RPMA_E_INVAL",
           "call:fn=rpma_mr_reg,err=RPMA_E_NOMEM,nth=0",        // counts start at 1
           "call:fn=rpma_mr_reg,err=RPMA_E_NOMEM,nth=1,nth=2",  // twice
           "wc:op=write",                                       // no status
           "wc:op=send,status=IBV_WC_REM_ACCESS_ERR",           // a send has no remote key
           "wc:op=write,status=IBV_WC_SUCCESS",
           "wc:op=teleport,status=IBV_WC_RETRY_EXC_ERR",
           "wc:status=IBV_WC_RETRY_EXC_ERR,p=1.5",
           "wc:status=IBV_WC_RETRY_EXC_ERR,side=middle",
           "delay:op=write",  // no us
           "delay:us=9-3",
           "partition:op=write",                          // no ms
           "wc:op=recv|write,status=IBV_WC_LOC_LEN_ERR",  // recv stands alone
           "wc:op=recv,status=IBV_WC_RETRY_EXC_ERR",      // not a receiver's status
           "wc:op=recv,status=IBV_WC_REM_OP_ERR",         // nor is a remote error
           "wc:status=IBV_WC_REM_ABORT_ERR",              // cannot be injected
           "power_failure:loss=half",
           "power_failure:exit=300",
           "delay:op=recv,us=5",  // wc only
           "partition:ms=0",
           "delay:us=1000000000000000000",  // not a time: over a year
           "partition:ms=999999999999999999",
           "lose:at_ms=31536000001",
           "lose:nth",
           "lose:color=red",
           "reject:conn=1",  // a request has no connection yet
           "reject:op=write",
           "unreachable:side=server",               // only a client finds it so
           "wc:status=IBV_WC_RETRY_EXC_ERR;bogus",  // one bad rule: none is added
       }) {
    EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add(rule)) << rule;
  }
  // Nothing was put in force: calls run as usual.
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  EXPECT_EQ(before, Fired());
}

// A post whose send queue is full fails with RPMA_E_PROVIDER, whatever its kind: a call rule
// may give it to each of them.
TEST_F(FaultRulesTest, EveryPostMayFailAsAFullSendQueue) {
  for (const char* fn : {"rpma_read", "rpma_write", "rpma_write_with_imm", "rpma_atomic_write",
                         "rpma_flush", "rpma_send", "rpma_send_with_imm", "rpma_recv"}) {
    std::string rule = std::string("call:fn=") + fn + ",err=RPMA_E_PROVIDER";
    EXPECT_EQ(0, rpma_sim_fault_add(rule.c_str())) << rule;
  }
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_add("call:fn=rpma_write_with_imm,err=RPMA_E_NOMEM"));
}

TEST_F(FaultRulesTest, CallRuleFailsTheNthCallOnly) {
  uint64_t before = Fired();
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=rpma_conn_cfg_new,err=RPMA_E_NOMEM,nth=2"));
  rpma_conn_cfg* cfg[3] = {};
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfg[0]));
  EXPECT_EQ(RPMA_E_NOMEM, rpma_conn_cfg_new(&cfg[1]));
  EXPECT_EQ(nullptr, cfg[1]);  // a failed call has no effect
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfg[2]));
  EXPECT_EQ(before + 1, Fired());
  EXPECT_EQ(0, rpma_sim_fault_clear());
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg[0]));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg[2]));
}

TEST_F(FaultRulesTest, CallRuleForAnyFunctionPicksOnesThatCanFailSo) {
  // RPMA_E_NO_EVENT: of the calls below only rpma_conn_next_event could return it, and
  // none of them is that one.
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=*,err=RPMA_E_NO_EVENT"));
  rpma_conn_cfg* cfg = nullptr;
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfg));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  ASSERT_EQ(0, rpma_sim_fault_clear());
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=*,err=RPMA_E_NOMEM,times=1"));
  EXPECT_EQ(RPMA_E_NOMEM, rpma_conn_cfg_new(&cfg));  // can run out of memory: fails
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfg));             // times=1: once only
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

// Two rules on the same function: each counts the calls it selects ("nth=N: only the Nth
// matching event"), whether or not another rule fired on one of them.
TEST_F(FaultRulesTest, EachRuleCountsEveryCallItSelects) {
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=rpma_conn_cfg_new,err=RPMA_E_NOMEM,nth=1;"
                                  "call:fn=rpma_conn_cfg_new,err=RPMA_E_INVAL,nth=2"));
  std::vector<int> returned;
  for (int i = 0; i < 3; ++i) {
    rpma_conn_cfg* cfg = nullptr;
    returned.push_back(rpma_conn_cfg_new(&cfg));
    if (cfg != nullptr) EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  }
  // The 1st call fails by the first rule, the 2nd by the second, the 3rd runs.
  EXPECT_EQ((std::vector<int>{RPMA_E_NOMEM, RPMA_E_INVAL, 0}), returned);
}

// `conn=` and `at_ms=` select a connection's work requests (rpma_sim(7): "For the kinds that
// act on work requests also"); a call has none, so a call rule naming them is not understood,
// as a reject rule naming them is not.
TEST_F(FaultRulesTest, CallRulesRefuseConnectionSelectors) {
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_sim_fault_add("call:fn=rpma_conn_cfg_new,err=RPMA_E_NOMEM,conn=1000"));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_sim_fault_add("call:fn=rpma_conn_cfg_new,err=RPMA_E_NOMEM,at_ms=3600000"));
  // Whatever was taken must at least not fail calls that no connection makes.
  rpma_conn_cfg* cfg = nullptr;
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfg));
  if (cfg != nullptr) EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

constexpr int kTargetUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC;

// Work-request rules on a connected pair. The client posts; selectors pick its requests.
class FaultWorkRequestTest : public PairFixture {
 protected:
  void SetUp() override {
    PairOptions options;
    if (client_timeout_ms_ > 0) {
      rpma_conn_cfg* cfg = NewCfg();
      ASSERT_NE(nullptr, cfg);
      ASSERT_EQ(0, rpma_conn_cfg_set_timeout(cfg, client_timeout_ms_));
      options.client_cfg = cfg;
    }
    ASSERT_NO_FATAL_FAILURE(ConnectPair(options));
    target_ = Register(64, kTargetUsage, 0);
    remote_ = regs_.RemoteOf(target_);
    ASSERT_NE(nullptr, remote_);
    source_ = Register(8, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, 0x5A);
  }

  void TearDown() override {
    EXPECT_EQ(0, rpma_sim_fault_clear());
    PairFixture::TearDown();
  }

  void Write(uintptr_t id) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, 8 * (id % 8), source_->mr, 0, 8,
                            RPMA_F_COMPLETION_ALWAYS, Ctx(id)));
  }

  int client_timeout_ms_ = 0;  // the client's rpma_conn_cfg_set_timeout, if not 0
  Buffer* target_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  Buffer* source_ = nullptr;
};

TEST_F(FaultWorkRequestTest, WcRuleFailsTheNthWriteAndFlushesTheRest) {
  uint64_t before = Fired();
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=write,status=IBV_WC_RETRY_EXC_ERR,nth=2,side=client"));
  for (uintptr_t id = 1; id <= 3; ++id) ASSERT_NO_FATAL_FAILURE(Write(id));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(before + 1, Fired());
}

TEST_F(FaultWorkRequestTest, RemoteAccessErrorFailsBothSides) {
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=read,status=IBV_WC_REM_ACCESS_ERR"));
  Buffer* inbox = Register(8, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 8, Ctx(50)));
  ASSERT_NO_FATAL_FAILURE(Write(1));  // writes are not selected
  ASSERT_EQ(
      0, rpma_read(pair_.client, source_->mr, 0, remote_, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ));
  // The responder went to error too: its posted receive is flushed.
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 50, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
}

// A remote operational error chosen by the requester's rule: the responder answers with it
// without touching memory, and both queue pairs go to error.
TEST_F(FaultWorkRequestTest, RemoteOperationErrorFailsBothSidesAndPlacesNothing) {
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=write,status=IBV_WC_REM_OP_ERR,nth=2,side=client"));
  Buffer* inbox = Register(8, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 8, Ctx(50)));
  for (uintptr_t id = 1; id <= 3; ++id) ASSERT_NO_FATAL_FAILURE(Write(id));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_REM_OP_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 50, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  EXPECT_EQ(0x5A, target_->bytes[8]);  // write 1 landed
  EXPECT_EQ(0, target_->bytes[16]);    // write 2 did not
  EXPECT_EQ(0, target_->bytes[24]);    // nor did the flushed write 3
}

// A remote invalid-request error on a send: the receive is not consumed but flushed with the
// responder's queue pair.
TEST_F(FaultWorkRequestTest, RemoteInvalidRequestOnSendFailsBothSides) {
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=send,status=IBV_WC_REM_INV_REQ_ERR"));
  Buffer* inbox = Register(8, RPMA_MR_USAGE_RECV, 0);
  Buffer* message = Source(8, 1);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(inbox, 0, 8, 50, message, 0, 8, 1));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(50, IBV_WC_WR_FLUSH_ERR, 1, IBV_WC_REM_INV_REQ_ERR));
  EXPECT_EQ(std::vector<uint8_t>(8, 0), inbox->bytes);
}

TEST_F(FaultWorkRequestTest, SelectorsThatMatchNothingFireNothing) {
  uint64_t before = Fired();
  ASSERT_EQ(0, rpma_sim_fault_add("wc:status=IBV_WC_RETRY_EXC_ERR,side=server;"
                                  "wc:status=IBV_WC_RETRY_EXC_ERR,conn=1000;"
                                  "wc:status=IBV_WC_RETRY_EXC_ERR,at_ms=3600000;"
                                  "lose:op=flush"));
  for (uintptr_t id = 1; id <= 4; ++id) ASSERT_NO_FATAL_FAILURE(Write(id));
  for (uintptr_t id = 1; id <= 4; ++id)
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, id, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(before, Fired());
}

TEST_F(FaultWorkRequestTest, EveryAndTimesCountPerConnection) {
  ASSERT_EQ(0, rpma_sim_fault_add("delay:op=write,us=1,every=2,times=2"));
  uint64_t before = Fired();
  for (uintptr_t id = 1; id <= 6; ++id) ASSERT_NO_FATAL_FAILURE(Write(id));
  for (uintptr_t id = 1; id <= 6; ++id)
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, id, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(before + 2, Fired());  // the 2nd and 4th; the 6th is past times=2
}

TEST_F(FaultWorkRequestTest, DelayedCompletionKeepsOrder) {
  constexpr auto kDelay = std::chrono::milliseconds(30);
  auto posted = std::chrono::steady_clock::now();
  ASSERT_EQ(0, rpma_sim_fault_add("delay:op=write,us=30000,nth=1"));
  ASSERT_NO_FATAL_FAILURE(Write(1));
  ASSERT_NO_FATAL_FAILURE(Write(2));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  EXPECT_GE(std::chrono::steady_clock::now() - posted, kDelay);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RDMA_WRITE));
}

TEST_F(FaultWorkRequestTest, LoseRuleLosesTheConnectionOnBothSides) {
  ASSERT_EQ(0, rpma_sim_fault_add("lose:op=write,nth=2,side=client"));
  // The first completes before the second is posted: over a wire an answer still on its
  // way when the connection is lost is flushed like everything else outstanding.
  ASSERT_NO_FATAL_FAILURE(Write(1));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  for (uintptr_t id = 2; id <= 3; ++id) ASSERT_NO_FATAL_FAILURE(Write(id));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_LOST));
  EXPECT_EQ(0, rpma_conn_delete(&pair_.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair_.server));
}

TEST_F(FaultWorkRequestTest, RecvRuleFailsTheReceiveAtTheReceiver) {
  uint64_t before = Fired();
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=recv,status=IBV_WC_LOC_LEN_ERR,side=server,nth=2"));
  Buffer* inbox = Register(16, RPMA_MR_USAGE_RECV, 0);
  Buffer* message = Source(8, 1);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(inbox, 0, 8, 50, message, 0, 8, 1));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(50, IBV_WC_SUCCESS, 1, IBV_WC_SUCCESS));
  // The second receive fails as one too small would: the sender sees the remote's error,
  // nothing is placed, both queue pairs go to error.
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(inbox, 8, 8, 51, message, 0, 8, 2));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(51, IBV_WC_LOC_LEN_ERR, 2, IBV_WC_REM_INV_REQ_ERR));
  EXPECT_EQ(std::vector<uint8_t>(8, 0),
            std::vector<uint8_t>(inbox->bytes.begin() + 8, inbox->bytes.end()));
  EXPECT_EQ(before + 1, Fired());
  ASSERT_NO_FATAL_FAILURE(Write(3));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
}

TEST_F(FaultWorkRequestTest, ShortPartitionOnlyDelaysInOrder) {
  uint64_t before = Fired();
  ASSERT_EQ(0, rpma_sim_fault_add("partition:op=write,ms=60,nth=2,side=client"));
  ASSERT_NO_FATAL_FAILURE(Write(1));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  auto cut = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(Write(2));
  ASSERT_NO_FATAL_FAILURE(Write(3));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RDMA_WRITE));
  EXPECT_GE(std::chrono::steady_clock::now() - cut, std::chrono::milliseconds(60));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(before + 1, Fired());
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair_.client));  // the connection lives on
}

// A partition cuts the link between two nodes: a second connection between the same two
// nodes waits too, though no rule fired on it.
TEST_F(FaultWorkRequestTest, PartitionCutsEveryConnectionBetweenTheTwoNodes) {
  rpma_conn* client2 = nullptr;
  rpma_conn* server2 = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      ConnectOnce(pair_.peer, pair_.ep, pair_.port, PairOptions(), &client2, &server2));
  uint64_t before = Fired();
  ASSERT_EQ(0, rpma_sim_fault_add("partition:op=write,ms=80,times=1,side=client"));
  auto cut = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(Write(1));
  ASSERT_EQ(0,
            rpma_write(client2, remote_, 32, source_->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2), 2, IBV_WC_RDMA_WRITE));
  EXPECT_GE(std::chrono::steady_clock::now() - cut, std::chrono::milliseconds(80));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(before + 1, Fired());
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client2, &server2));
}

// A cut link only delays (ms below the timeout): a request that waited at it is still a
// matching event of the rules, so the first read of the other connection between the two
// nodes is the one `nth=1` fails, whether or not a cut held it for a while.
TEST_F(FaultWorkRequestTest, ARequestHeldAtACutLinkIsStillSelectedByRules) {
  rpma_conn* client2 = nullptr;
  rpma_conn* server2 = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      ConnectOnce(pair_.peer, pair_.ep, pair_.port, PairOptions(), &client2, &server2));
  ASSERT_EQ(0, rpma_sim_fault_add("partition:op=write,ms=100,times=1,side=client;"
                                  "wc:op=read,status=IBV_WC_REM_OP_ERR,nth=1,side=client"));
  ASSERT_NO_FATAL_FAILURE(Write(1));  // the link is cut for 100 ms
  ASSERT_EQ(0, rpma_read(client2, source_->mr, 0, remote_, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  SCOPED_TRACE("the 1st read of the 2nd connection, held at the cut: wc nth=1 must fail it");
  EXPECT_NO_FATAL_FAILURE(
      ExpectCompletion(MainCq(client2), 2, IBV_WC_REM_OP_ERR, IBV_WC_RDMA_READ));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client2, &server2));
}

// A rule counts a connection's work requests (nth=2: the 2nd of each connection); the counts
// of connections that ended go, so a process that makes connection after connection under a
// rule holds a bounded number of them, and a live connection's count survives.
TEST_F(FaultWorkRequestTest, CountsOfEndedConnectionsGo) {
  if (getenv("RPMA_SIM_TRANSPORT") != nullptr) GTEST_SKIP() << "in process only: 1100 connections";
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=write,status=IBV_WC_GENERAL_ERR,nth=2,side=client"));
  ASSERT_NO_FATAL_FAILURE(Write(1));  // the pair's 1st: counted, does not fire
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  constexpr int kConnections = 1100;
  for (int i = 0; i < kConnections; ++i) {
    rpma_conn* client = nullptr;
    rpma_conn* server = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        ConnectOnce(pair_.peer, pair_.ep, pair_.port, PairOptions(), &client, &server));
    ASSERT_EQ(0,
              rpma_write(client, remote_, 0, source_->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(7)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client), 7, IBV_WC_RDMA_WRITE));
    ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  }
  EXPECT_LT(rpma_sim::FaultPlan::Get().connection_counts(), static_cast<size_t>(kConnections));
  ASSERT_NO_FATAL_FAILURE(Write(2));  // the pair's 2nd: its count survived
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_GENERAL_ERR, IBV_WC_RDMA_WRITE));
}

// Connections whose timeout (five minutes) is longer than any cut here: a cut only delays.
class FaultLongTimeoutTest : public FaultWorkRequestTest {
 protected:
  FaultLongTimeoutTest() { client_timeout_ms_ = kLongTimeoutMs; }
  static constexpr int kLongTimeoutMs = 300000;
};

// rpma_sim_fault_clear removes every rule and ends the cuts they began: a request waiting at one
// goes on at once (not after its two minutes), and a later, unrelated rule does not bring the
// cut back to hold the other connection between the two nodes.
TEST_F(FaultLongTimeoutTest, ClearEndsTheCutARuleBegan) {
  rpma_conn_cfg* cfg = NewCfg();
  ASSERT_NE(nullptr, cfg);
  ASSERT_EQ(0, rpma_conn_cfg_set_timeout(cfg, kLongTimeoutMs));
  PairOptions options;
  options.client_cfg = cfg;
  rpma_conn* client2 = nullptr;
  rpma_conn* server2 = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      ConnectOnce(pair_.peer, pair_.ep, pair_.port, options, &client2, &server2));
  ASSERT_EQ(0, rpma_sim_fault_add("partition:op=write,ms=120000,nth=1,side=client"));
  ASSERT_NO_FATAL_FAILURE(Write(1));  // waits at the cut
  ASSERT_EQ(0, rpma_sim_fault_clear());
  SCOPED_TRACE("the write that waited at the cut, once the rules are cleared");
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  // A rule on a call that no write makes: the other connection's writes go through.
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=rpma_mr_advise,err=RPMA_E_PROVIDER"));
  ASSERT_EQ(0,
            rpma_write(client2, remote_, 40, source_->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2), 2, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client2, &server2));
}

// A partition at least as long as the connection's timeout (200 ms here) ends it.
class FaultPartitionTest : public FaultWorkRequestTest {
 protected:
  FaultPartitionTest() { client_timeout_ms_ = 200; }
};

TEST_F(FaultPartitionTest, LongPartitionEndsAsRetriesExceededThenLost) {
  ASSERT_EQ(0, rpma_sim_fault_add("partition:op=write,ms=100000,nth=1,side=client"));
  auto cut = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(Write(1));
  ASSERT_NO_FATAL_FAILURE(Write(2));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RETRY_EXC_ERR, IBV_WC_RDMA_WRITE));
  EXPECT_GE(std::chrono::steady_clock::now() - cut, std::chrono::milliseconds(200));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_LOST));
  // Nothing crossed the cut link.
  EXPECT_EQ(std::vector<uint8_t>(64, 0), target_->bytes);
  EXPECT_EQ(0, rpma_conn_delete(&pair_.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair_.server));
}

// Connection-request rules: the client's request is rejected or finds nobody; the endpoint
// never sees it; the next request is not selected and connects.
class FaultConnectTest : public PeerFixture {
 protected:
  void TearDown() override {
    EXPECT_EQ(0, rpma_sim_fault_clear());
    PeerFixture::TearDown();
  }

  // A request selected by the rule in force ends with `outcome`; then one that is not
  // selected connects.
  void ExpectRequestEndsThenNextConnects(const rpma_conn_cfg* cfg, rpma_conn_event outcome) {
    uint64_t before = Fired();
    rpma_conn* client = nullptr;
    ASSERT_NO_FATAL_FAILURE(ClientConnect(peer_, port_, cfg, nullptr, &client));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, outcome));
    EXPECT_EQ(0, rpma_conn_delete(&client));
    EXPECT_EQ(before + 1, Fired());
    int ep_fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
    EXPECT_FALSE(IsReadableNow(ep_fd)) << "the endpoint saw a request the fault turned down";
    rpma_conn* server = nullptr;
    ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer_, ep_, port_, PairOptions(), &client, &server));
    ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  }
};

TEST_F(FaultConnectTest, RejectRuleRejectsTheClientsRequest) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_EQ(0, rpma_sim_fault_add("reject:nth=1"));
  ASSERT_NO_FATAL_FAILURE(ExpectRequestEndsThenNextConnects(nullptr, RPMA_CONN_REJECTED));
}

TEST_F(FaultConnectTest, RejectRuleOnTheServerTurnsDownWhatArrives) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_EQ(0, rpma_sim_fault_add("reject:side=server,nth=1"));
  ASSERT_NO_FATAL_FAILURE(ExpectRequestEndsThenNextConnects(nullptr, RPMA_CONN_REJECTED));
}

TEST_F(FaultConnectTest, UnreachableRuleEndsTheRequestAfterItsTimeout) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_timeout(cfg, 40));
  ASSERT_EQ(0, rpma_sim_fault_add("unreachable:times=1"));
  auto started = std::chrono::steady_clock::now();
  ASSERT_NO_FATAL_FAILURE(ExpectRequestEndsThenNextConnects(cfg, RPMA_CONN_UNREACHABLE));
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(40));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

// A call rule fails the application's calls: the simulator's own use of a public function
// inside another call (rpma_conn_req_new asks rpma_log_get_threshold whether to print GIDs,
// where librpma reads its threshold directly) is no call of the application's, and neither
// counts for `nth=` nor fires.
TEST_F(FaultConnectTest, ACallRuleCountsTheApplicationsCallsOnly) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=rpma_log_get_threshold,err=RPMA_E_INVAL,nth=1"));
  uint64_t before = Fired();
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
  EXPECT_EQ(before, Fired()) << "a rule fired inside rpma_conn_req_new";
  rpma_log_level level = RPMA_LOG_DISABLED;
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level))
      << "the application's 1st rpma_log_get_threshold";
}

// A call rule gives "an error librpma 1.3 can return from it": where librpma's code consumes or
// frees the object whatever the result (docs/librpma-compatibility.md: rpma_conn_req_connect
// "*req_ptr is NULL afterwards, whatever the result"; rpma_conn_req_delete "Frees anyway";
// rpma_mr_dereg, rpma_peer_delete, rpma_ep_shutdown "always freed and set to NULL"), an
// injected error must too, or a program correct under librpma leaks the object.
TEST_F(FaultConnectTest, AnInjectedErrorConsumesWhatLibrpmaAlwaysConsumes) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=rpma_conn_req_connect,err=RPMA_E_PROVIDER,times=1"));
  rpma_conn* conn = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_connect(&req, nullptr, &conn));
  EXPECT_EQ(nullptr, req) << "rpma_conn_req_connect left the request to the caller";
  if (req != nullptr) EXPECT_EQ(0, rpma_conn_req_delete(&req));

  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=rpma_conn_req_delete,err=RPMA_E_PROVIDER,times=1"));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_delete(&req));
  EXPECT_EQ(nullptr, req) << "rpma_conn_req_delete did not free the request";
  if (req != nullptr) EXPECT_EQ(0, rpma_conn_req_delete(&req));

  std::vector<uint8_t> buffer(64);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer.data(), buffer.size(), RPMA_MR_USAGE_READ_SRC, &mr));
  ASSERT_EQ(0, rpma_sim_fault_add("call:fn=rpma_mr_dereg,err=RPMA_E_PROVIDER,times=1"));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_mr_dereg(&mr));
  EXPECT_EQ(nullptr, mr) << "rpma_mr_dereg did not free the region";
  if (mr != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&mr));
}

// docs/fault-injection.md's example: RPMA_SIM_FAULTS='reject:nth=1;unreachable:nth=2' --
// "the 1st and 2nd connects fail".
TEST_F(FaultConnectTest, TheDocumentedRejectThenUnreachableFailsTheFirstTwoConnects) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_timeout(cfg, 40));
  ASSERT_EQ(0, rpma_sim_fault_add("reject:nth=1;unreachable:nth=2"));
  rpma_conn* client = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnect(peer_, port_, cfg, nullptr, &client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_REJECTED));
  EXPECT_EQ(0, rpma_conn_delete(&client));
  // The 2nd: its address never answers, so the endpoint never hears of it.
  ASSERT_NO_FATAL_FAILURE(ClientConnect(peer_, port_, cfg, nullptr, &client));
  int ep_fd = -1, conn_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
  ASSERT_EQ(0, rpma_conn_get_event_fd(client, &conn_fd));
  pollfd fds[2] = {{ep_fd, POLLIN, 0}, {conn_fd, POLLIN, 0}};
  ASSERT_GT(poll(fds, 2, 5000), 0) << "neither side heard of the 2nd request";
  if (fds[0].revents & POLLIN) {
    ADD_FAILURE() << "the 2nd connect was not failed: its request reached the endpoint";
    rpma_conn_req* req = nullptr;
    ASSERT_NO_FATAL_FAILURE(NextConnReq(ep_, nullptr, &req));
    EXPECT_EQ(0, rpma_conn_req_delete(&req));  // turns it down
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_REJECTED));
  } else {
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_UNREACHABLE));
  }
  EXPECT_EQ(0, rpma_conn_delete(&client));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

}  // namespace
