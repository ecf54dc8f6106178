// Tests of CompletionQueue (sim/verbs/completion_queue): Push/Poll order, send-queue retirement
// and overflow.
#include "sim/verbs/completion_queue.h"

#include <memory>

#include <gtest/gtest.h>

#include "sim/verbs/send_queue_slots.h"
#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

ibv_wc Completion(uint64_t wr_id, ibv_wc_status status = IBV_WC_SUCCESS,
                  ibv_wc_opcode opcode = IBV_WC_RDMA_WRITE, uint32_t byte_len = 0) {
  ibv_wc wc{};
  wc.wr_id = wr_id;
  wc.status = status;
  wc.opcode = opcode;
  wc.byte_len = byte_len;
  return wc;
}

class CompletionQueueTest : public ::testing::Test {
 protected:
  std::shared_ptr<CompletionChannel> channel_ = std::make_shared<CompletionChannel>();
  CompletionQueue cq_{16, channel_};
};

TEST_F(CompletionQueueTest, Accessors) {
  EXPECT_EQ(16u, cq_.depth());
  EXPECT_EQ(channel_.get(), cq_.channel());
}

TEST_F(CompletionQueueTest, PollOfAnEmptyQueueIsZero) {
  ibv_wc wc[4];
  EXPECT_EQ(0, cq_.Poll(4, wc));
}

TEST_F(CompletionQueueTest, PollReturnsCompletionsInPushOrder) {
  for (uint64_t id = 1; id <= 3; ++id) cq_.Push(Completion(id));
  ibv_wc wc;
  for (uint64_t id = 1; id <= 3; ++id) {
    ASSERT_EQ(1, cq_.Poll(1, &wc));
    EXPECT_EQ(id, wc.wr_id);
  }
  EXPECT_EQ(0, cq_.Poll(1, &wc));
}

TEST_F(CompletionQueueTest, PollOfSeveralTakesAtMostMax) {
  for (uint64_t id = 1; id <= 5; ++id) cq_.Push(Completion(id));
  ibv_wc wc[8];
  ASSERT_EQ(3, cq_.Poll(3, wc));
  EXPECT_EQ(1u, wc[0].wr_id);
  EXPECT_EQ(2u, wc[1].wr_id);
  EXPECT_EQ(3u, wc[2].wr_id);
  ASSERT_EQ(2, cq_.Poll(8, wc));  // fewer than asked for
  EXPECT_EQ(4u, wc[0].wr_id);
  EXPECT_EQ(5u, wc[1].wr_id);
  EXPECT_EQ(0, cq_.Poll(8, wc));
}

TEST_F(CompletionQueueTest, PollOfZeroTakesNothing) {
  cq_.Push(Completion(1));
  ibv_wc wc;
  EXPECT_EQ(0, cq_.Poll(0, &wc));
  ASSERT_EQ(1, cq_.Poll(1, &wc));
  EXPECT_EQ(1u, wc.wr_id);
}

TEST_F(CompletionQueueTest, PollCopiesTheWholeCompletion) {
  cq_.Push(Completion(42, IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ, 4096));
  ibv_wc wc{};
  ASSERT_EQ(1, cq_.Poll(1, &wc));
  EXPECT_EQ(42u, wc.wr_id);
  EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
  EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
  EXPECT_EQ(4096u, wc.byte_len);
}

TEST_F(CompletionQueueTest, PollingASendCompletionRetiresThroughItsSequence) {
  auto slots = std::make_shared<SendQueueSlots>(4);
  uint64_t sequence[3];
  for (uint64_t& s : sequence) ASSERT_TRUE(slots->Acquire(&s));
  // Request 0 is unsignalled; 1 and 2 complete.
  cq_.Push(Completion(1), slots, sequence[1]);
  cq_.Push(Completion(2), slots, sequence[2]);
  EXPECT_EQ(3u, slots->in_use());  // pushing alone returns nothing
  ibv_wc wc;
  ASSERT_EQ(1, cq_.Poll(1, &wc));
  EXPECT_EQ(1u, slots->in_use());  // requests 0 and 1
  ASSERT_EQ(1, cq_.Poll(1, &wc));
  EXPECT_EQ(0u, slots->in_use());
}

TEST_F(CompletionQueueTest, PollOfSeveralRetiresEachEntry) {
  auto slots = std::make_shared<SendQueueSlots>(2);
  uint64_t first = 0;
  uint64_t second = 0;
  ASSERT_TRUE(slots->Acquire(&first));
  ASSERT_TRUE(slots->Acquire(&second));
  cq_.Push(Completion(1), slots, first);
  cq_.Push(Completion(2), slots, second);
  ibv_wc wc[2];
  ASSERT_EQ(2, cq_.Poll(2, wc));
  EXPECT_EQ(0u, slots->in_use());
}

TEST_F(CompletionQueueTest, ReceiveCompletionsRetireNothing) {
  auto slots = std::make_shared<SendQueueSlots>(2);
  uint64_t sequence = 0;
  ASSERT_TRUE(slots->Acquire(&sequence));
  cq_.Push(Completion(7, IBV_WC_SUCCESS, IBV_WC_RECV));
  ibv_wc wc;
  ASSERT_EQ(1, cq_.Poll(1, &wc));
  EXPECT_EQ(IBV_WC_RECV, wc.opcode);
  EXPECT_EQ(1u, slots->in_use());
}

TEST_F(CompletionQueueTest, CompletionsOfTwoSendQueuesRetireTheirOwnQueue) {
  auto a = std::make_shared<SendQueueSlots>(2);
  auto b = std::make_shared<SendQueueSlots>(2);
  uint64_t sa = 0;
  uint64_t sb = 0;
  ASSERT_TRUE(a->Acquire(&sa));
  ASSERT_TRUE(b->Acquire(&sb));
  ASSERT_TRUE(b->Acquire(&sb));
  cq_.Push(Completion(1), a, sa);
  ibv_wc wc;
  ASSERT_EQ(1, cq_.Poll(1, &wc));
  EXPECT_EQ(0u, a->in_use());
  EXPECT_EQ(2u, b->in_use());
}

TEST_F(CompletionQueueTest, HoldsExactlyItsDepth) {
  for (uint64_t id = 1; id <= 16; ++id) EXPECT_TRUE(cq_.Push(Completion(id))) << id;
  EXPECT_EQ(0u, cq_.lost());
  ibv_wc wc[16];
  ASSERT_EQ(16, cq_.Poll(16, wc));
  // Room again: a queue that was full but never overflowed goes on.
  EXPECT_TRUE(cq_.Push(Completion(17)));
  ASSERT_EQ(1, cq_.Poll(1, wc));
  EXPECT_EQ(17u, wc[0].wr_id);
}

TEST_F(CompletionQueueTest, OneMoreThanItsDepthOverflowsAndEveryLaterOneIsLost) {
  for (uint64_t id = 1; id <= 16; ++id) ASSERT_TRUE(cq_.Push(Completion(id)));
  EXPECT_FALSE(cq_.Push(Completion(17)));
  EXPECT_EQ(1u, cq_.lost());
  ibv_wc wc[16];
  ASSERT_EQ(10, cq_.Poll(10, wc));
  // Room again, but an overflowed queue takes nothing more.
  EXPECT_FALSE(cq_.Push(Completion(18)));
  EXPECT_EQ(2u, cq_.lost());
  // What it held comes out in order, then the overflow, for good.
  ASSERT_EQ(6, cq_.Poll(16, wc));
  EXPECT_EQ(11u, wc[0].wr_id);
  EXPECT_EQ(16u, wc[5].wr_id);
  EXPECT_EQ(-1, cq_.Poll(16, wc));
  EXPECT_EQ(-1, cq_.Poll(1, wc));
}

TEST_F(CompletionQueueTest, ALostSendCompletionRetiresNothing) {
  auto slots = std::make_shared<SendQueueSlots>(32);
  uint64_t sequence = 0;
  for (uint64_t id = 1; id <= 17; ++id) {
    ASSERT_TRUE(slots->Acquire(&sequence));
    cq_.Push(Completion(id), slots, sequence);
  }
  ibv_wc wc[16];
  ASSERT_EQ(16, cq_.Poll(16, wc));
  EXPECT_EQ(1u, slots->in_use());  // the lost one's slot: its queue pair is in error
}

TEST_F(CompletionQueueTest, AnArmedQueueThatOverflowsRaisesAnEvent) {
  ASSERT_TRUE(rpma_sim_test::SetNonBlocking(channel_->fd()));
  for (uint64_t id = 1; id <= 16; ++id) ASSERT_TRUE(cq_.Push(Completion(id)));
  cq_.Arm();
  EXPECT_FALSE(cq_.Push(Completion(17)));
  CompletionQueue* fired = nullptr;
  ASSERT_EQ(Status::kOk, channel_->GetEvent(&fired));
  EXPECT_EQ(&cq_, fired);
}

TEST_F(CompletionQueueTest, ArmingAnOverflowedQueueRaisesAnEventAtOnce) {
  ASSERT_TRUE(rpma_sim_test::SetNonBlocking(channel_->fd()));
  for (uint64_t id = 1; id <= 17; ++id) cq_.Push(Completion(id));
  CompletionQueue* fired = nullptr;
  EXPECT_EQ(Status::kNoCompletion, channel_->GetEvent(&fired));  // it was not armed
  // A waiter that arms it now is not left waiting for a completion that cannot come.
  cq_.Arm();
  ASSERT_EQ(Status::kOk, channel_->GetEvent(&fired));
  EXPECT_EQ(&cq_, fired);
  cq_.Arm();
  ASSERT_EQ(Status::kOk, channel_->GetEvent(&fired));
}

TEST(CompletionQueueLifetimeTest, SlotsOutliveTheirQueuePair) {
  auto channel = std::make_shared<CompletionChannel>();
  CompletionQueue cq(4, channel);
  auto slots = std::make_shared<SendQueueSlots>(1);
  std::weak_ptr<SendQueueSlots> weak = slots;
  uint64_t sequence = 0;
  ASSERT_TRUE(slots->Acquire(&sequence));
  cq.Push(Completion(1), slots, sequence);
  slots.reset();  // the queue pair is gone; its completion is still queued
  EXPECT_FALSE(weak.expired());
  ibv_wc wc;
  EXPECT_EQ(1, cq.Poll(1, &wc));
  EXPECT_TRUE(weak.expired());
}

}  // namespace
}  // namespace rpma_sim
