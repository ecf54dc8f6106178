// Tests of SpinBudget (sim/common/spin_budget): how a waiter's spin grows to cover the waits
// it saw, is capped, and shrinks back when waits are long; and that EventFd feeds it.
#include "sim/common/spin_budget.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "sim/common/event_fd.h"

namespace rpma_sim {
namespace {

constexpr int64_t kUs = 1000;

TEST(SpinBudgetTest, StartsAtTheShortestSpin) {
  SpinBudget budget;
  EXPECT_EQ(SpinBudget::kMinNs, budget.ns());
}

TEST(SpinBudgetTest, AWaitTheSpinCoveredLeavesIt) {
  SpinBudget budget;
  budget.Record(0);
  budget.Record(SpinBudget::kMinNs);
  EXPECT_EQ(SpinBudget::kMinNs, budget.ns());
  budget.Record(200 * kUs);
  budget.Record(100 * kUs);  // covered by the 250 us the last one gave
  EXPECT_EQ(250 * kUs, budget.ns());
}

TEST(SpinBudgetTest, AWaitJustPastTheSpinGrowsItToCoverTheWaitWithAQuarterMore) {
  SpinBudget budget;
  budget.Record(100 * kUs);
  EXPECT_EQ(125 * kUs, budget.ns());
  budget.Record(160 * kUs);
  EXPECT_EQ(200 * kUs, budget.ns());
}

TEST(SpinBudgetTest, GrowsNoFurtherThanTheLongestSpin) {
  SpinBudget budget;
  budget.Record(SpinBudget::kMaxNs - 10 * kUs);
  EXPECT_EQ(SpinBudget::kMaxNs, budget.ns());
  budget.Record(SpinBudget::kMaxNs);  // covered
  EXPECT_EQ(SpinBudget::kMaxNs, budget.ns());
}

TEST(SpinBudgetTest, WaitsLongerThanTheLongestSpinHalveItDownToTheShortest) {
  SpinBudget budget;
  budget.Record(SpinBudget::kMaxNs);
  ASSERT_EQ(SpinBudget::kMaxNs, budget.ns());
  const int64_t idle = 10 * SpinBudget::kMaxNs;
  budget.Record(idle);
  EXPECT_EQ(SpinBudget::kMaxNs / 2, budget.ns());
  budget.Record(idle);
  EXPECT_EQ(SpinBudget::kMaxNs / 4, budget.ns());
  for (int i = 0; i < 10; ++i) budget.Record(idle);
  EXPECT_EQ(SpinBudget::kMinNs, budget.ns());
  // And grows again when the answers come quickly once more.
  budget.Record(300 * kUs);
  EXPECT_EQ(375 * kUs, budget.ns());
}

TEST(SpinBudgetTest, AnEventFdTakeTellsItsBudgetHowLongItWaited) {
  SpinBudget budget;
  budget.Record(SpinBudget::kMaxNs);
  ASSERT_EQ(SpinBudget::kMaxNs, budget.ns());
  EventFd event(&budget);
  // Pending already: a wait of about nothing, which the spin covers.
  event.Signal();
  ASSERT_TRUE(event.Take());
  EXPECT_EQ(SpinBudget::kMaxNs, budget.ns());
  // Signalled 20 ms later (the signaller's pause makes the wait long; nothing waits on
  // time): far longer than the longest spin, so the budget halves.
  std::thread signaller([&event] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    event.Signal();
  });
  EXPECT_TRUE(event.Take());
  signaller.join();
  EXPECT_EQ(SpinBudget::kMaxNs / 2, budget.ns());
}

}  // namespace
}  // namespace rpma_sim
