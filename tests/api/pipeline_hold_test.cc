// pipeline_hold_test.cc -- the stage seam of the work-request pipeline (sim/verbs/stage_gate.h):
// a request held at submission, at execution or at completion keeps every later request of
// its queue pair waiting behind it at that stage (RC order), goes on when its hold is
// released or its time comes, and is flushed in order with the rest when the connection
// fails. Like every API test, it runs in process and again over tcp and over shm.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>

#include "sim/verbs/stage_gate.h"
#include "tests/common/test_support.h"

namespace {

using rpma_sim::Stage;
using rpma_sim::StageHold;

// Holds the request with send-queue sequence `sequence` (its queue pair's requests are
// numbered from 0 in posting order; the responder sees the same numbers, but not the
// requester's wr_id) once, at `stage`, for `hold`.
class OneHoldGate : public rpma_sim::StageGate {
 public:
  OneHoldGate(Stage stage, uint64_t sequence, std::shared_ptr<StageHold> hold)
      : stage_(stage), sequence_(sequence), hold_(std::move(hold)) {}

  std::shared_ptr<StageHold> Check(const rpma_sim::StagePoint& point) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (point.stage == stage_) asked_.push_back(point.sequence);
    if (point.stage != stage_ || point.sequence != sequence_ || fired_) return nullptr;
    fired_ = true;
    return hold_;
  }

  // The sequences the gate was asked about at its stage, in order.
  std::vector<uint64_t> asked() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }

 private:
  const Stage stage_;
  const uint64_t sequence_;
  const std::shared_ptr<StageHold> hold_;
  std::mutex mutex_;
  bool fired_ = false;
  std::vector<uint64_t> asked_;
};

constexpr int kTargetUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC;

class PipelineHoldTest : public PairFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ConnectPair());
    target_ = Register(64, kTargetUsage, 0);
    remote_ = regs_.RemoteOf(target_);
    ASSERT_NE(nullptr, remote_);
    for (int k = 0; k < 3; ++k) source_[k] = Register(8, RPMA_MR_USAGE_WRITE_SRC, 0xA1 + k);
    readback_ = Register(8, RPMA_MR_USAGE_READ_DST, 0);
  }

  void TearDown() override {
    rpma_sim::SetStageGate(nullptr);
    PairFixture::TearDown();
  }

  // Installs a gate that holds the `sequence`th request at `stage` for `hold`.
  std::shared_ptr<OneHoldGate> HoldOnce(Stage stage, uint64_t sequence,
                                        std::shared_ptr<StageHold> hold) {
    auto gate = std::make_shared<OneHoldGate>(stage, sequence, std::move(hold));
    rpma_sim::SetStageGate(gate);
    return gate;
  }

  // Writes source k (8 bytes of 0xA1 + k) to target offset 8 * k, signalled, wr_id k + 1.
  // Posted first, write k is the connection's request k.
  void Write(int k) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, 8 * k, source_[k]->mr, 0, 8,
                            RPMA_F_COMPLETION_ALWAYS, Ctx(k + 1)));
  }

  // Write k with immediate data k: the server learns it executed from a receive completion
  // (a receive is posted for it first), without reading memory the fabric may be writing.
  void WriteWithImm(int k) {
    ASSERT_EQ(0, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(100 + k)));
    ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 8 * k, source_[k]->mr, 0, 8,
                                     RPMA_F_COMPLETION_ALWAYS, k, Ctx(k + 1)));
  }

  // The server's receive completion for WriteWithImm(k): that write has executed.
  void ExpectExecuted(int k) {
    ibv_wc wc;
    ASSERT_NO_FATAL_FAILURE(
        ExpectCompletion(server_cq_, 100 + k, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, &wc));
    EXPECT_EQ(htonl(k), wc.imm_data);
  }

  // Only when nothing may be writing the target any more (after a completion says so).
  bool Landed(int k) { return target_->bytes[8 * k] == 0xA1 + k; }

  Buffer* target_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  Buffer* source_[3] = {};
  Buffer* readback_ = nullptr;
};

TEST_F(PipelineHoldTest, HeldSubmissionKeepsLaterRequestsBehindIt) {
  auto hold = StageHold::UntilReleased();
  auto gate = HoldOnce(Stage::kSubmit, 1, hold);
  for (int k = 0; k < 3; ++k) ASSERT_NO_FATAL_FAILURE(Write(k));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(Landed(0));
  // Neither the held write nor the one behind it has left the requester.
  EXPECT_FALSE(Landed(1));
  EXPECT_FALSE(Landed(2));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ((std::vector<uint64_t>{0, 1}), gate->asked());  // 2 waits without asking

  hold->Release();
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(Landed(1));
  EXPECT_TRUE(Landed(2));
  EXPECT_EQ((std::vector<uint64_t>{0, 1, 2}), gate->asked());
}

TEST_F(PipelineHoldTest, HeldExecutionKeepsALaterReadBehindIt) {
  auto hold = StageHold::UntilReleased();
  HoldOnce(Stage::kExecute, 1, hold);
  ASSERT_NO_FATAL_FAILURE(Write(0));
  ASSERT_NO_FATAL_FAILURE(Write(1));
  // Reads what the held write is to place: RC order says it must see it.
  ASSERT_EQ(0, rpma_read(pair_.client, readback_->mr, 0, remote_, 8, 8, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(10)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(Landed(0));
  EXPECT_FALSE(Landed(1));
  ExpectNoCompletion(client_cq_);

  hold->Release();
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 10, IBV_WC_RDMA_READ));
  EXPECT_EQ(0xA2, readback_->bytes[0]);
}

TEST_F(PipelineHoldTest, HeldCompletionKeepsLaterCompletionsBehindIt) {
  auto hold = StageHold::UntilReleased();
  HoldOnce(Stage::kComplete, 0, hold);
  ASSERT_NO_FATAL_FAILURE(WriteWithImm(0));
  ASSERT_NO_FATAL_FAILURE(WriteWithImm(1));
  // Both execute at the target; neither completes while the first one's completion is held.
  ASSERT_NO_FATAL_FAILURE(ExpectExecuted(0));
  ASSERT_NO_FATAL_FAILURE(ExpectExecuted(1));
  ExpectNoCompletion(client_cq_);

  hold->Release();
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(Landed(0));
  EXPECT_TRUE(Landed(1));
}

TEST_F(PipelineHoldTest, HeldReadCompletesWithItsBytes) {
  target_->bytes[8] = 0x5C;
  auto hold = StageHold::UntilReleased();
  HoldOnce(Stage::kComplete, 0, hold);
  ASSERT_EQ(0, rpma_read(pair_.client, readback_->mr, 0, remote_, 8, 8, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(10)));
  ASSERT_NO_FATAL_FAILURE(WriteWithImm(1));
  ASSERT_NO_FATAL_FAILURE(ExpectExecuted(1));  // the write behind the read has executed
  ExpectNoCompletion(client_cq_);
  hold->Release();
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 10, IBV_WC_RDMA_READ));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0x5C, readback_->bytes[0]);
}

// A send held at execution and then without a receive (RNR) waits for both, and the gate
// is asked about it once.
TEST_F(PipelineHoldTest, HeldSendThenWaitsForItsReceive) {
  auto hold = StageHold::UntilReleased();
  auto gate = HoldOnce(Stage::kExecute, 0, hold);
  Buffer* message = Register(8, RPMA_MR_USAGE_SEND, 0x3D);
  Buffer* inbox = Register(8, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_send(pair_.client, message->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(7)));
  hold->Release();
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 8, Ctx(8)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 8, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 7, IBV_WC_SEND));
  EXPECT_EQ(0x3D, inbox->bytes[0]);
  EXPECT_EQ((std::vector<uint64_t>{0}), gate->asked());
}

TEST_F(PipelineHoldTest, TimedHoldEndsByItself) {
  constexpr auto kHold = std::chrono::milliseconds(30);
  auto posted = std::chrono::steady_clock::now();  // before the hold's time starts
  HoldOnce(Stage::kSubmit, 0, StageHold::For(kHold));
  ASSERT_NO_FATAL_FAILURE(Write(0));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  EXPECT_GE(std::chrono::steady_clock::now() - posted, kHold);
  EXPECT_TRUE(Landed(0));
}

TEST_F(PipelineHoldTest, HeldErrorOutcomeStillErrorsTheQueuePair) {
  auto hold = StageHold::UntilReleased();
  HoldOnce(Stage::kComplete, 0, hold);
  // Past the end of the target: the responder answers IBV_WC_REM_ACCESS_ERR.
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 60, source_[0]->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(1)));
  ASSERT_NO_FATAL_FAILURE(Write(1));
  ExpectNoCompletion(client_cq_);
  hold->Release();
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, 1, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  EXPECT_FALSE(Landed(1));  // the responder went to error with the first
}

// A request that fails the requester's own checks (a read into a region without local write
// access) completes in its turn, after the request under way before it, as a NIC that checks
// it when it takes it from the queue would; what is posted after it is flushed.
TEST_F(PipelineHoldTest, LocalFailureCompletesAfterTheRequestUnderWayBeforeIt) {
  Buffer* send_only = Register(8, RPMA_MR_USAGE_SEND, 0);
  auto hold = StageHold::UntilReleased();
  HoldOnce(Stage::kExecute, 0, hold);
  ASSERT_NO_FATAL_FAILURE(Write(0));
  ASSERT_EQ(0, rpma_read(pair_.client, send_only->mr, 0, remote_, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(10)));
  ExpectNoCompletion(client_cq_);  // not before the write it follows
  hold->Release();
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 10, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_READ));
  ASSERT_NO_FATAL_FAILURE(Write(2));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(Landed(0));
  EXPECT_FALSE(Landed(2));
}

// A request whose source region is deregistered while it waits to be submitted fails
// locally when its turn comes: none of its bytes (the buffer still holds them) leave.
TEST_F(PipelineHoldTest, HeldRequestWhoseSourceWasDeregisteredFailsLocally) {
  auto hold = StageHold::UntilReleased();
  HoldOnce(Stage::kSubmit, 1, hold);
  for (int k = 0; k < 3; ++k) ASSERT_NO_FATAL_FAILURE(Write(k));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(regs_.Deregister(&source_[1]->mr));
  hold->Release();
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(Landed(0));
  EXPECT_FALSE(Landed(1));
  EXPECT_FALSE(Landed(2));
}

// A node failure while requests wait at every stage: each completes, in posting order, with
// IBV_WC_WR_FLUSH_ERR, and a hold released afterwards changes nothing.
TEST_F(PipelineHoldTest, LostConnectionFlushesHeldRequestsInOrder) {
  auto hold = StageHold::UntilReleased();
  HoldOnce(Stage::kSubmit, 1, hold);
  for (int k = 0; k < 3; ++k) ASSERT_NO_FATAL_FAILURE(Write(k));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_EQ(0, rpma_sim_node_fail(pair_.peer));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_LOST));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_LOST));
  hold->Release();
  // Resuming a queue pair in error moves nothing: a request posted now is flushed at once,
  // and it is the next completion.
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, source_[0]->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(4)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 4, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  EXPECT_FALSE(Landed(1));
  EXPECT_FALSE(Landed(2));
  EXPECT_EQ(0, rpma_conn_delete(&pair_.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair_.server));
}

}  // namespace
