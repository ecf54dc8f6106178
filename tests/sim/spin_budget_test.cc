// Tests of SpinBudget (sim/common/spin_budget): how a waiter's spin grows to cover the waits
// it saw, is capped, and shrinks back when waits are long; and that EventFd feeds it.
#include "sim/common/spin_budget.h"

#include <sys/syscall.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "sim/common/event_fd.h"
#include "tests/sim/sim_test_support.h"

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

// Takes one event of `event` on another thread, signalled once that thread sleeps in
// system call `syscall_number` (signalled either way, so that the taker ends).
void TakeSignalledWhileBlockedIn(EventFd* event, long syscall_number) {
  std::atomic<pid_t> tid{0};
  std::thread taker([&] {
    tid = rpma_sim_test::CurrentTid();
    EXPECT_EQ(EventFd::Taken::kYes, event->Take());
  });
  while (tid.load() == 0) std::this_thread::yield();
  EXPECT_TRUE(rpma_sim_test::WaitUntilBlockedIn(tid.load(), syscall_number));
  event->Signal();
  taker.join();
}

// A taker that slept on the count (on its futex: its spin ran out first) tells its budget a wait
// longer than the spin; with the budget at its longest, one longer than kMaxNs, which halves it.
TEST(SpinBudgetTest, AnEventFdTakeThatSleptTellsItsBudget) {
  SpinBudget budget;
  budget.Record(SpinBudget::kMaxNs);
  ASSERT_EQ(SpinBudget::kMaxNs, budget.ns());
  EventFd event(&budget);
  TakeSignalledWhileBlockedIn(&event, SYS_futex);
  EXPECT_EQ(SpinBudget::kMaxNs / 2, budget.ns());
}

// Once the application asked for the kernel fd a taker neither spins nor tells its budget
// anything: it blocks in read(2).
TEST(SpinBudgetTest, AnEventFdTakeOnTheKernelFdLeavesItsBudget) {
  SpinBudget budget;
  budget.Record(SpinBudget::kMaxNs);
  EventFd event(&budget);
  ASSERT_GE(event.fd(), 0);
  TakeSignalledWhileBlockedIn(&event, SYS_read);
  EXPECT_EQ(SpinBudget::kMaxNs, budget.ns());
}

}  // namespace
}  // namespace rpma_sim
