// Tests of SendQueueSlots (sim/verbs/send_queue_slots): capacity, sequences and retirement.
#include "sim/verbs/send_queue_slots.h"

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

TEST(SendQueueSlotsTest, AcquireUpToCapacityThenFull) {
  SendQueueSlots slots(4);
  uint64_t sequence = 0;
  for (uint64_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(slots.Acquire(&sequence)) << i;
    EXPECT_EQ(i, sequence);
    EXPECT_EQ(i + 1, slots.in_use());
  }
  EXPECT_FALSE(slots.Acquire(&sequence));
  EXPECT_FALSE(slots.Acquire(&sequence));
  EXPECT_EQ(4u, slots.in_use());
}

TEST(SendQueueSlotsTest, FailedAcquireLeavesTheSequenceAlone) {
  SendQueueSlots slots(1);
  uint64_t sequence = 0;
  ASSERT_TRUE(slots.Acquire(&sequence));
  uint64_t untouched = 12345;
  EXPECT_FALSE(slots.Acquire(&untouched));
  EXPECT_EQ(12345u, untouched);
  slots.RetireThrough(sequence);
  ASSERT_TRUE(slots.Acquire(&sequence));
  EXPECT_EQ(1u, sequence);  // the failed attempt used no number
}

TEST(SendQueueSlotsTest, RetireThroughFreesEverythingUpToAndIncludingTheSequence) {
  SendQueueSlots slots(4);
  uint64_t sequence = 0;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(slots.Acquire(&sequence));
  slots.RetireThrough(1);  // requests 0 and 1 (say 0 unsignalled, 1 signalled)
  EXPECT_EQ(2u, slots.in_use());
  ASSERT_TRUE(slots.Acquire(&sequence));
  EXPECT_EQ(4u, sequence);
  ASSERT_TRUE(slots.Acquire(&sequence));
  EXPECT_EQ(5u, sequence);
  EXPECT_FALSE(slots.Acquire(&sequence));
  slots.RetireThrough(5);
  EXPECT_EQ(0u, slots.in_use());
}

TEST(SendQueueSlotsTest, RetiringFirstRequestFreesOneSlot) {
  SendQueueSlots slots(2);
  uint64_t sequence = 0;
  ASSERT_TRUE(slots.Acquire(&sequence));
  ASSERT_TRUE(slots.Acquire(&sequence));
  slots.RetireThrough(0);
  EXPECT_EQ(1u, slots.in_use());
}

TEST(SendQueueSlotsTest, RetiringAnOlderSequenceAgainChangesNothing) {
  SendQueueSlots slots(4);
  uint64_t sequence = 0;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(slots.Acquire(&sequence));
  slots.RetireThrough(2);
  EXPECT_EQ(1u, slots.in_use());
  slots.RetireThrough(0);  // an older completion polled late
  EXPECT_EQ(1u, slots.in_use());
  slots.RetireThrough(2);
  EXPECT_EQ(1u, slots.in_use());
}

TEST(SendQueueSlotsTest, ManyRoundsThroughAOneSlotQueue) {
  SendQueueSlots slots(1);
  for (uint64_t i = 0; i < 1000; ++i) {
    uint64_t sequence = 0;
    ASSERT_TRUE(slots.Acquire(&sequence));
    EXPECT_EQ(i, sequence);
    EXPECT_FALSE(slots.Acquire(&sequence));
    slots.RetireThrough(sequence);
    EXPECT_EQ(0u, slots.in_use());
  }
}

TEST(SendQueueSlotsTest, ZeroCapacityIsAlwaysFull) {
  SendQueueSlots slots(0);
  uint64_t sequence = 0;
  EXPECT_FALSE(slots.Acquire(&sequence));
  EXPECT_EQ(0u, slots.in_use());
}

}  // namespace
}  // namespace rpma_sim
