// Tests of registered memory (sim/verbs/memory_region): overflow-safe bounds and the rkey table.
#include "sim/verbs/memory_region.h"

#include <stdint.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

// A region descriptor over `length` bytes at `start`; nothing is dereferenced.
MemoryRegion RegionAt(uint64_t start, size_t length) {
  MemoryRegion region;
  region.addr = reinterpret_cast<uint8_t*>(start);
  region.length = length;
  return region;
}

TEST(MemoryRegionTest, ContainsOffsetInsideAndAtTheEdges) {
  uint8_t buffer[4096];
  MemoryRegion region = RegionAt(reinterpret_cast<uint64_t>(buffer), sizeof(buffer));
  EXPECT_TRUE(region.ContainsOffset(0, 4096));
  EXPECT_TRUE(region.ContainsOffset(0, 0));
  EXPECT_TRUE(region.ContainsOffset(4095, 1));
  EXPECT_TRUE(region.ContainsOffset(100, 200));
  EXPECT_FALSE(region.ContainsOffset(0, 4097));
  EXPECT_FALSE(region.ContainsOffset(4095, 2));
  EXPECT_FALSE(region.ContainsOffset(4096, 1));
}

TEST(MemoryRegionTest, ZeroLengthAtTheEndIsContainedButNotBeyond) {
  MemoryRegion region = RegionAt(0x10000, 4096);
  EXPECT_TRUE(region.ContainsOffset(4096, 0));
  EXPECT_FALSE(region.ContainsOffset(4097, 0));
  EXPECT_TRUE(region.Contains(0x10000 + 4096, 0));
  EXPECT_FALSE(region.Contains(0x10000 + 4097, 0));
}

TEST(MemoryRegionTest, ContainsOffsetDoesNotOverflow) {
  MemoryRegion region = RegionAt(0x10000, 4096);
  EXPECT_FALSE(region.ContainsOffset(UINT64_MAX, 1));
  EXPECT_FALSE(region.ContainsOffset(UINT64_MAX, 0));
  EXPECT_FALSE(region.ContainsOffset(UINT64_MAX - 1, 2));  // offset + len wraps to 0
  EXPECT_FALSE(region.ContainsOffset(1, UINT64_MAX));      // wraps to 0
  EXPECT_FALSE(region.ContainsOffset(4095, SIZE_MAX));
  EXPECT_FALSE(region.ContainsOffset(0, SIZE_MAX));
  EXPECT_FALSE(region.ContainsOffset(4096, UINT64_MAX));
}

TEST(MemoryRegionTest, ContainsAddressInsideAndAtTheEdges) {
  const uint64_t start = 0x10000;
  MemoryRegion region = RegionAt(start, 4096);
  EXPECT_TRUE(region.Contains(start, 4096));
  EXPECT_TRUE(region.Contains(start + 4095, 1));
  EXPECT_FALSE(region.Contains(start, 4097));
  EXPECT_FALSE(region.Contains(start - 1, 1));
  EXPECT_FALSE(region.Contains(start - 1, 2));  // starts before, ends inside
  EXPECT_FALSE(region.Contains(start + 4095, 2));
  EXPECT_FALSE(region.Contains(0, 0));
}

TEST(MemoryRegionTest, ContainsAddressDoesNotOverflow) {
  MemoryRegion region = RegionAt(0x10000, 4096);
  EXPECT_FALSE(region.Contains(UINT64_MAX, 1));
  EXPECT_FALSE(region.Contains(UINT64_MAX, 0));
  EXPECT_FALSE(region.Contains(0x10000 + 1, UINT64_MAX));
  EXPECT_FALSE(region.Contains(0x10000 + 4095, SIZE_MAX));
}

TEST(MemoryRegionTest, RegionEndingAtTheTopOfTheAddressSpace) {
  // [UINT64_MAX - 15, 2^64): its end is not representable in 64 bits.
  const uint64_t start = UINT64_MAX - 15;
  MemoryRegion region = RegionAt(start, 16);
  EXPECT_TRUE(region.Contains(start, 16));
  EXPECT_TRUE(region.Contains(UINT64_MAX, 1));
  EXPECT_TRUE(region.Contains(UINT64_MAX, 0));
  EXPECT_TRUE(region.ContainsOffset(16, 0));
  EXPECT_FALSE(region.Contains(start, 17));
  EXPECT_FALSE(region.Contains(UINT64_MAX, 2));
  EXPECT_FALSE(region.Contains(start - 1, 1));
  EXPECT_FALSE(region.ContainsOffset(15, 2));
}

TEST(MemoryRegionTest, EmptyRegionContainsOnlyTheEmptyRangeAtItsStart) {
  MemoryRegion region = RegionAt(0x10000, 0);
  EXPECT_TRUE(region.ContainsOffset(0, 0));
  EXPECT_FALSE(region.ContainsOffset(0, 1));
  EXPECT_FALSE(region.ContainsOffset(1, 0));
  EXPECT_TRUE(region.Contains(0x10000, 0));
  EXPECT_FALSE(region.Contains(0x10000, 1));
}

class MemoryRegionTableTest : public ::testing::Test {
 protected:
  MemoryRegionTable& table_ = MemoryRegionTable::Get();
  uint8_t buffer_[256] = {};
};

TEST_F(MemoryRegionTableTest, GetIsOneTable) { EXPECT_EQ(&MemoryRegionTable::Get(), &table_); }

TEST_F(MemoryRegionTableTest, RegisterFillsTheRegion) {
  auto region = table_.Register(nullptr, buffer_, sizeof(buffer_), IBV_ACCESS_REMOTE_READ);
  ASSERT_NE(nullptr, region);
  EXPECT_EQ(nullptr, region->pd);
  EXPECT_EQ(buffer_, region->addr);
  EXPECT_EQ(sizeof(buffer_), region->length);
  EXPECT_EQ(IBV_ACCESS_REMOTE_READ, region->access);
  table_.Deregister(region);
}

TEST_F(MemoryRegionTableTest, RegisterGivesDistinctKeys) {
  std::vector<std::shared_ptr<MemoryRegion>> regions;
  std::set<uint32_t> rkeys;
  std::set<uint32_t> lkeys;
  for (int i = 0; i < 64; ++i) {
    regions.push_back(table_.Register(nullptr, buffer_ + i, 1, IBV_ACCESS_LOCAL_WRITE));
    rkeys.insert(regions.back()->rkey);
    lkeys.insert(regions.back()->lkey);
  }
  EXPECT_EQ(regions.size(), rkeys.size());
  EXPECT_EQ(regions.size(), lkeys.size());
  for (auto& region : regions) table_.Deregister(region);
}

TEST_F(MemoryRegionTableTest, SameMemoryRegisteredTwiceGetsTwoKeys) {
  auto first = table_.Register(nullptr, buffer_, sizeof(buffer_), 0);
  auto second = table_.Register(nullptr, buffer_, sizeof(buffer_), 0);
  EXPECT_NE(first->rkey, second->rkey);
  table_.mutex().LockShared();
  EXPECT_EQ(first.get(), table_.FindLocked(first->rkey));
  EXPECT_EQ(second.get(), table_.FindLocked(second->rkey));
  table_.mutex().UnlockShared();
  table_.Deregister(first);
  table_.Deregister(second);
}

TEST_F(MemoryRegionTableTest, FindLockedByRkey) {
  auto a = table_.Register(nullptr, buffer_, 16, IBV_ACCESS_REMOTE_WRITE);
  auto b = table_.Register(nullptr, buffer_ + 16, 16, IBV_ACCESS_REMOTE_READ);
  {
    ReaderLock lock(&table_.mutex());
    EXPECT_EQ(a.get(), table_.FindLocked(a->rkey));
    EXPECT_EQ(b.get(), table_.FindLocked(b->rkey));
  }
  table_.Deregister(a);
  table_.Deregister(b);
}

TEST_F(MemoryRegionTableTest, DeregisterRemovesOnlyThatRegion) {
  auto a = table_.Register(nullptr, buffer_, 16, 0);
  auto b = table_.Register(nullptr, buffer_, 16, 0);
  table_.Deregister(a);
  table_.mutex().LockShared();
  EXPECT_EQ(nullptr, table_.FindLocked(a->rkey));
  EXPECT_FALSE(table_.IsRegisteredLocked(*a));
  EXPECT_EQ(b.get(), table_.FindLocked(b->rkey));
  EXPECT_TRUE(table_.IsRegisteredLocked(*b));
  table_.mutex().UnlockShared();
  table_.Deregister(b);
}

TEST_F(MemoryRegionTableTest, IsRegisteredLockedMeansThisVeryRegion) {
  auto region = table_.Register(nullptr, buffer_, 16, 0);
  MemoryRegion copy = *region;  // same rkey, but not the registered object
  table_.mutex().LockShared();
  EXPECT_TRUE(table_.IsRegisteredLocked(*region));
  EXPECT_FALSE(table_.IsRegisteredLocked(copy));
  table_.mutex().UnlockShared();
  table_.Deregister(region);
}

// A fork child has a table of its own: a region the parent registered is not registered
// there, and deregistering it there leaves the child's own regions alone, even one with the
// same key (each table numbers its keys from the same start).
TEST_F(MemoryRegionTableTest, AForkChildsTableHasNoneOfTheParentsRegions) {
  auto parent_region = table_.Register(nullptr, buffer_, 16, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    MemoryRegionTable& own = MemoryRegionTable::Get();
    int failures = &own == &table_ ? 1 : 0;
    std::shared_ptr<MemoryRegion> child_region;
    do {  // until one has the parent's region's key
      child_region = own.Register(nullptr, buffer_, 16, 0);
    } while (child_region->rkey < parent_region->rkey);
    own.mutex().LockShared();
    failures += own.IsRegisteredLocked(*parent_region) ? 2 : 0;
    own.mutex().UnlockShared();
    own.Deregister(parent_region);
    own.mutex().LockShared();
    failures += own.FindLocked(child_region->rkey) != child_region.get() ? 4 : 0;
    own.mutex().UnlockShared();
    _exit(failures);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "1: one table; 2: registered in the child; 4: the "
                                       "child's own region deregistered";
  table_.mutex().LockShared();
  EXPECT_TRUE(table_.IsRegisteredLocked(*parent_region));
  table_.mutex().UnlockShared();
  table_.Deregister(parent_region);
}

TEST_F(MemoryRegionTableTest, DeregisteredRegionStaysAliveWhileReferenced) {
  auto region = table_.Register(nullptr, buffer_, 16, 0);
  std::weak_ptr<MemoryRegion> weak = region;
  table_.Deregister(region);
  EXPECT_FALSE(weak.expired());
  region.reset();
  EXPECT_TRUE(weak.expired());  // the table no longer holds it
}

TEST_F(MemoryRegionTableTest, DeregisterWaitsForSharedLockHolders) {
  auto region = table_.Register(nullptr, buffer_, 16, 0);
  table_.mutex().LockShared();
  ASSERT_EQ(region.get(), table_.FindLocked(region->rkey));
  std::atomic<pid_t> tid{0};
  std::promise<void> done;
  std::future<void> deregistered = done.get_future();
  std::thread deregisterer([&] {
    tid = rpma_sim_test::CurrentTid();
    table_.Deregister(region);
    done.set_value();
  });
  while (tid.load() == 0) std::this_thread::yield();
  ASSERT_TRUE(rpma_sim_test::WaitUntilBlockedIn(tid.load(), SYS_futex))
      << "Deregister never waited on the lock";
  EXPECT_NE(std::future_status::ready, deregistered.wait_for(std::chrono::seconds(0)));
  EXPECT_TRUE(table_.IsRegisteredLocked(*region));  // still usable while the lock is held
  table_.mutex().UnlockShared();
  ASSERT_EQ(std::future_status::ready, deregistered.wait_for(std::chrono::seconds(30)));
  deregisterer.join();
  ReaderLock lock(&table_.mutex());
  EXPECT_EQ(nullptr, table_.FindLocked(region->rkey));
}

}  // namespace
}  // namespace rpma_sim
