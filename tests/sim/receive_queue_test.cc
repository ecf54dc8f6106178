// Tests of ReceiveQueue (sim/verbs/receive_queue): capacity, FIFO Take and TakeAll.
#include "sim/verbs/receive_queue.h"

#include <memory>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

ReceiveRequest Request(uint64_t wr_id, std::shared_ptr<MemoryRegion> region = nullptr,
                       uint64_t offset = 0, uint64_t length = 0) {
  ReceiveRequest request;
  request.wr_id = wr_id;
  request.region = std::move(region);
  request.offset = offset;
  request.length = length;
  return request;
}

TEST(ReceiveQueueTest, PostUpToCapacityThenProvider) {
  ReceiveQueue queue(3);
  EXPECT_EQ(Status::kOk, queue.Post(Request(1)));
  EXPECT_EQ(Status::kOk, queue.Post(Request(2)));
  EXPECT_EQ(Status::kOk, queue.Post(Request(3)));
  EXPECT_EQ(Status::kProvider, queue.Post(Request(4)));
  EXPECT_EQ(3u, queue.TakeAll().size());  // the rejected one was not queued
}

TEST(ReceiveQueueTest, TakeIsFifo) {
  ReceiveQueue queue(8);
  for (uint64_t id = 10; id < 15; ++id) ASSERT_EQ(Status::kOk, queue.Post(Request(id)));
  ReceiveRequest taken;
  for (uint64_t id = 10; id < 15; ++id) {
    ASSERT_TRUE(queue.Take(&taken));
    EXPECT_EQ(id, taken.wr_id);
  }
  EXPECT_FALSE(queue.Take(&taken));
}

TEST(ReceiveQueueTest, TakeFromEmptyIsFalse) {
  ReceiveQueue queue(1);
  ReceiveRequest taken = Request(99);
  EXPECT_FALSE(queue.Take(&taken));
}

TEST(ReceiveQueueTest, TakeFreesCapacity) {
  ReceiveQueue queue(2);
  ASSERT_EQ(Status::kOk, queue.Post(Request(1)));
  ASSERT_EQ(Status::kOk, queue.Post(Request(2)));
  ASSERT_EQ(Status::kProvider, queue.Post(Request(3)));
  ReceiveRequest taken;
  ASSERT_TRUE(queue.Take(&taken));
  EXPECT_EQ(1u, taken.wr_id);
  EXPECT_EQ(Status::kOk, queue.Post(Request(3)));
  ASSERT_TRUE(queue.Take(&taken));
  EXPECT_EQ(2u, taken.wr_id);
  ASSERT_TRUE(queue.Take(&taken));
  EXPECT_EQ(3u, taken.wr_id);
}

TEST(ReceiveQueueTest, TakeCarriesTheWholeRequest) {
  auto region = std::make_shared<MemoryRegion>();
  ReceiveQueue queue(1);
  ASSERT_EQ(Status::kOk, queue.Post(Request(7, region, 64, 128)));
  ReceiveRequest taken;
  ASSERT_TRUE(queue.Take(&taken));
  EXPECT_EQ(7u, taken.wr_id);
  EXPECT_EQ(region, taken.region);
  EXPECT_EQ(64u, taken.offset);
  EXPECT_EQ(128u, taken.length);
  EXPECT_EQ(2, region.use_count());  // the queue kept no reference
}

TEST(ReceiveQueueTest, TakeAllReturnsEverythingInOrderAndEmpties) {
  ReceiveQueue queue(4);
  for (uint64_t id = 1; id <= 4; ++id) ASSERT_EQ(Status::kOk, queue.Post(Request(id)));
  std::deque<ReceiveRequest> all = queue.TakeAll();
  ASSERT_EQ(4u, all.size());
  for (uint64_t id = 1; id <= 4; ++id) EXPECT_EQ(id, all[id - 1].wr_id);
  ReceiveRequest taken;
  EXPECT_FALSE(queue.Take(&taken));
  EXPECT_TRUE(queue.TakeAll().empty());
  for (uint64_t id = 5; id <= 8; ++id) EXPECT_EQ(Status::kOk, queue.Post(Request(id)));
  EXPECT_EQ(Status::kProvider, queue.Post(Request(9)));
}

TEST(ReceiveQueueTest, ZeroCapacityRejectsEveryPost) {
  ReceiveQueue queue(0);
  EXPECT_EQ(Status::kProvider, queue.Post(Request(1)));
}

}  // namespace
}  // namespace rpma_sim
