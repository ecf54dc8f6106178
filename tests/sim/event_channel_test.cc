// Tests of the CM EventChannel (sim/cm/event_channel): Push/Next order, non-blocking Next, TakeAll,
// wake-up.
#include "sim/cm/event_channel.h"

#include <sys/syscall.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

using rpma_sim_test::IsReadable;

CmEvent Event(CmEventType type, std::vector<uint8_t> private_data = {}) {
  CmEvent event;
  event.type = type;
  event.private_data = std::move(private_data);
  return event;
}

class EventChannelTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(rpma_sim_test::SetNonBlocking(channel_.fd())); }
  EventChannel channel_;
};

TEST_F(EventChannelTest, FdIsValid) { EXPECT_GE(channel_.fd(), 0); }

TEST_F(EventChannelTest, NonBlockingNextWithNothingPendingIsNoEvent) {
  CmEvent event;
  EXPECT_EQ(Status::kNoEvent, channel_.Next(&event));
  EXPECT_FALSE(IsReadable(channel_.fd()));
}

TEST_F(EventChannelTest, NextReturnsEventsInPushOrder) {
  channel_.Push(Event(CmEventType::kConnectRequest, {1, 2, 3}));
  channel_.Push(Event(CmEventType::kEstablished));
  channel_.Push(Event(CmEventType::kDisconnected, {9}));
  CmEvent event;
  ASSERT_EQ(Status::kOk, channel_.Next(&event));
  EXPECT_EQ(CmEventType::kConnectRequest, event.type);
  EXPECT_EQ((std::vector<uint8_t>{1, 2, 3}), event.private_data);
  ASSERT_EQ(Status::kOk, channel_.Next(&event));
  EXPECT_EQ(CmEventType::kEstablished, event.type);
  EXPECT_TRUE(event.private_data.empty());
  ASSERT_EQ(Status::kOk, channel_.Next(&event));
  EXPECT_EQ(CmEventType::kDisconnected, event.type);
  EXPECT_EQ(std::vector<uint8_t>{9}, event.private_data);
  EXPECT_EQ(Status::kNoEvent, channel_.Next(&event));
}

TEST_F(EventChannelTest, FdIsReadableExactlyWhileEventsArePending) {
  EXPECT_FALSE(IsReadable(channel_.fd()));
  channel_.Push(Event(CmEventType::kRejected));
  channel_.Push(Event(CmEventType::kUnreachable));
  EXPECT_TRUE(IsReadable(channel_.fd()));
  CmEvent event;
  ASSERT_EQ(Status::kOk, channel_.Next(&event));
  EXPECT_TRUE(IsReadable(channel_.fd()));
  ASSERT_EQ(Status::kOk, channel_.Next(&event));
  EXPECT_FALSE(IsReadable(channel_.fd()));
}

TEST_F(EventChannelTest, TakeAllReturnsEverythingInOrder) {
  channel_.Push(Event(CmEventType::kConnectRequest, {1}));
  channel_.Push(Event(CmEventType::kConnectRequest, {2}));
  channel_.Push(Event(CmEventType::kConnectError));
  std::deque<CmEvent> all = channel_.TakeAll();
  ASSERT_EQ(3u, all.size());
  EXPECT_EQ(std::vector<uint8_t>{1}, all[0].private_data);
  EXPECT_EQ(std::vector<uint8_t>{2}, all[1].private_data);
  EXPECT_EQ(CmEventType::kConnectError, all[2].type);
  CmEvent event;
  EXPECT_EQ(Status::kNoEvent, channel_.Next(&event));
  EXPECT_TRUE(channel_.TakeAll().empty());
}

TEST_F(EventChannelTest, TakeAllOfAnEmptyChannelIsEmpty) {
  EXPECT_TRUE(channel_.TakeAll().empty());
}

TEST_F(EventChannelTest, EventsPushedAfterTakeAllAreDelivered) {
  channel_.Push(Event(CmEventType::kEstablished));
  ASSERT_EQ(1u, channel_.TakeAll().size());
  channel_.Push(Event(CmEventType::kDisconnected));
  CmEvent event;
  ASSERT_EQ(Status::kOk, channel_.Next(&event));
  EXPECT_EQ(CmEventType::kDisconnected, event.type);
  EXPECT_EQ(Status::kNoEvent, channel_.Next(&event));
}

TEST(EventChannelBlockingTest, BlockedNextWakesOnPush) {
  EventChannel channel;
  std::atomic<pid_t> tid{0};
  std::promise<Status> next;
  std::future<Status> result = next.get_future();
  CmEvent event;
  std::thread waiter([&] {
    tid = rpma_sim_test::CurrentTid();
    next.set_value(channel.Next(&event));
  });
  while (tid.load() == 0) std::this_thread::yield();
  // Nobody asked for the fd: the wait needs none (a futex).
  ASSERT_TRUE(rpma_sim_test::WaitUntilBlockedIn(tid.load(), SYS_futex));
  EXPECT_NE(std::future_status::ready, result.wait_for(std::chrono::seconds(0)));
  channel.Push(Event(CmEventType::kEstablished, {7}));
  ASSERT_EQ(std::future_status::ready, result.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(Status::kOk, result.get());
  waiter.join();
  EXPECT_EQ(CmEventType::kEstablished, event.type);
  EXPECT_EQ(std::vector<uint8_t>{7}, event.private_data);
}

}  // namespace
}  // namespace rpma_sim
