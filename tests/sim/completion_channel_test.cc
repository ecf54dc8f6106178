// Tests of CompletionChannel with armed CQs (sim/verbs/completion_channel): one event per arm, fd,
// wake-up.
#include "sim/verbs/completion_channel.h"

#include <sys/syscall.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "sim/verbs/completion_queue.h"
#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

using rpma_sim_test::IsReadable;

ibv_wc Completion(uint64_t wr_id) {
  ibv_wc wc{};
  wc.wr_id = wr_id;
  wc.status = IBV_WC_SUCCESS;
  return wc;
}

// A non-blocking channel shared by two completion queues.
class CompletionChannelTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(rpma_sim_test::SetNonBlocking(channel_->fd())); }

  // Non-blocking GetEvent: the CQ it names, or nullptr after kNoCompletion.
  CompletionQueue* NextEvent() {
    CompletionQueue* cq = nullptr;
    Status status = channel_->GetEvent(&cq);
    if (status == Status::kNoCompletion) return nullptr;
    EXPECT_EQ(Status::kOk, status);
    EXPECT_NE(nullptr, cq);
    return cq;
  }

  std::shared_ptr<CompletionChannel> channel_ = std::make_shared<CompletionChannel>();
  CompletionQueue cq_{16, channel_};
  CompletionQueue other_cq_{16, channel_};
};

TEST_F(CompletionChannelTest, FdIsValid) { EXPECT_GE(channel_->fd(), 0); }

TEST_F(CompletionChannelTest, NonBlockingGetEventWithNothingPendingIsNoCompletion) {
  CompletionQueue* cq = nullptr;
  EXPECT_EQ(Status::kNoCompletion, channel_->GetEvent(&cq));
  EXPECT_EQ(nullptr, cq);
  EXPECT_FALSE(IsReadable(channel_->fd()));
}

TEST_F(CompletionChannelTest, UnarmedQueueRaisesNoEvent) {
  cq_.Push(Completion(1));
  cq_.Push(Completion(2));
  EXPECT_FALSE(IsReadable(channel_->fd()));
  EXPECT_EQ(nullptr, NextEvent());
  ibv_wc wc[2];
  EXPECT_EQ(2, cq_.Poll(2, wc));  // the completions are there all the same
}

TEST_F(CompletionChannelTest, ArmedQueueRaisesExactlyOneEvent) {
  cq_.Arm();
  EXPECT_FALSE(IsReadable(channel_->fd()));  // arming alone raises nothing
  cq_.Push(Completion(1));
  EXPECT_TRUE(IsReadable(channel_->fd()));
  cq_.Push(Completion(2));
  cq_.Push(Completion(3));
  EXPECT_EQ(&cq_, NextEvent());
  EXPECT_FALSE(IsReadable(channel_->fd()));
  EXPECT_EQ(nullptr, NextEvent());
}

TEST_F(CompletionChannelTest, ArmingTwiceStillGivesOneEvent) {
  cq_.Arm();
  cq_.Arm();
  cq_.Push(Completion(1));
  cq_.Push(Completion(2));
  EXPECT_EQ(&cq_, NextEvent());
  EXPECT_EQ(nullptr, NextEvent());
}

TEST_F(CompletionChannelTest, EachArmGivesItsOwnEvent) {
  for (uint64_t round = 0; round < 3; ++round) {
    cq_.Arm();
    cq_.Push(Completion(round));
    EXPECT_EQ(&cq_, NextEvent()) << round;
    EXPECT_EQ(nullptr, NextEvent()) << round;
    cq_.Push(Completion(100 + round));  // not re-armed yet
    EXPECT_EQ(nullptr, NextEvent()) << round;
  }
}

TEST_F(CompletionChannelTest, ReArmingBeforeTakingTheEventQueuesASecondOne) {
  cq_.Arm();
  cq_.Push(Completion(1));
  cq_.Arm();
  cq_.Push(Completion(2));
  EXPECT_EQ(&cq_, NextEvent());
  EXPECT_EQ(&cq_, NextEvent());
  EXPECT_EQ(nullptr, NextEvent());
}

TEST_F(CompletionChannelTest, ArmingWithCompletionsAlreadyQueuedWaitsForTheNextOne) {
  cq_.Push(Completion(1));
  cq_.Arm();
  EXPECT_EQ(nullptr, NextEvent());
  cq_.Push(Completion(2));
  EXPECT_EQ(&cq_, NextEvent());
}

TEST_F(CompletionChannelTest, PollingDoesNotDisarm) {
  cq_.Arm();
  ibv_wc wc;
  EXPECT_EQ(0, cq_.Poll(1, &wc));
  cq_.Push(Completion(1));
  EXPECT_EQ(&cq_, NextEvent());
}

TEST_F(CompletionChannelTest, SharedChannelReportsWhichQueueFired) {
  cq_.Arm();
  other_cq_.Arm();
  other_cq_.Push(Completion(1));
  cq_.Push(Completion(2));
  EXPECT_EQ(&other_cq_, NextEvent());
  EXPECT_EQ(&cq_, NextEvent());
  EXPECT_EQ(nullptr, NextEvent());
}

TEST_F(CompletionChannelTest, OnlyTheArmedQueueOfASharedChannelFires) {
  other_cq_.Arm();
  cq_.Push(Completion(1));
  EXPECT_EQ(nullptr, NextEvent());
  other_cq_.Push(Completion(2));
  EXPECT_EQ(&other_cq_, NextEvent());
  EXPECT_EQ(nullptr, NextEvent());
}

TEST_F(CompletionChannelTest, EventsOfADestroyedQueueAreDropped) {
  auto doomed = std::make_unique<CompletionQueue>(4, channel_);
  doomed->Arm();
  doomed->Push(Completion(1));
  cq_.Arm();
  cq_.Push(Completion(2));
  doomed.reset();
  EXPECT_EQ(&cq_, NextEvent());
  EXPECT_EQ(nullptr, NextEvent());
  EXPECT_FALSE(IsReadable(channel_->fd()));
}

TEST_F(CompletionChannelTest, DestroyedQueueWithTheOnlyEventLeavesNothingToGet) {
  auto doomed = std::make_unique<CompletionQueue>(4, channel_);
  doomed->Arm();
  doomed->Push(Completion(1));
  doomed.reset();
  EXPECT_EQ(nullptr, NextEvent());
  EXPECT_FALSE(IsReadable(channel_->fd()));
}

TEST(CompletionChannelBlockingTest, BlockedGetEventWakesOnACompletion) {
  auto channel = std::make_shared<CompletionChannel>();
  CompletionQueue cq(4, channel);
  cq.Arm();
  std::atomic<pid_t> tid{0};
  std::promise<CompletionQueue*> fired;
  std::future<CompletionQueue*> result = fired.get_future();
  std::thread waiter([&] {
    tid = rpma_sim_test::CurrentTid();
    CompletionQueue* which = nullptr;
    fired.set_value(channel->GetEvent(&which) == Status::kOk ? which : nullptr);
  });
  while (tid.load() == 0) std::this_thread::yield();
  // Nobody asked for the fd: the wait needs none (a futex).
  ASSERT_TRUE(rpma_sim_test::WaitUntilBlockedIn(tid.load(), SYS_futex));
  EXPECT_NE(std::future_status::ready, result.wait_for(std::chrono::seconds(0)));
  cq.Push(Completion(1));
  ASSERT_EQ(std::future_status::ready, result.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(&cq, result.get());
  waiter.join();
}

}  // namespace
}  // namespace rpma_sim
