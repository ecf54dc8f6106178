// persistence_domain_test.cc -- the persistence model of one node without a fabric: torn
// power failures replay from the seed, what survives each flush, and the report's count.
#include "sim/pmem/persistence_domain.h"

#include <gtest/gtest.h>
#include <string.h>

#include <vector>

namespace rpma_sim {
namespace {

constexpr uint8_t kOld = 0x11;
constexpr uint8_t kNew = 0xEE;
constexpr uint32_t kKey = 0x1234;

// A 4 KiB region (64-byte aligned) on a fresh node: armed, every byte kOld, then `len` bytes
// at 0 placed by connection 1 and overwritten with kNew.
class Node {
 public:
  explicit Node(uint64_t len, DeviceCaps caps = DeviceCaps()) : domain_(caps) {
    domain_.Arm();
    memset(memory_, kOld, sizeof(memory_));
    domain_.Place(Region(), 0, len, Placement{1, 1, 1, PlacedBy::kWrite, false});
    memset(memory_, kNew, len);
  }

  PlacedRegion Region() { return PlacedRegion{kKey, memory_, sizeof(memory_)}; }
  PersistenceDomain& domain() { return domain_; }
  std::vector<uint8_t> Memory() const { return std::vector<uint8_t>(memory_, memory_ + 4096); }

 private:
  alignas(64) uint8_t memory_[4096];
  PersistenceDomain domain_;
};

TEST(PersistenceDomainTest, TornLossReplaysFromTheSeed) {
  Node first(4096), again(4096), other(4096);
  first.domain().PowerFail(LossMode::kWords, 42);
  again.domain().PowerFail(LossMode::kWords, 42);
  other.domain().PowerFail(LossMode::kWords, 43);
  EXPECT_EQ(first.Memory(), again.Memory());
  EXPECT_NE(first.Memory(), other.Memory());  // 512 words drawn: equal by chance 2^-512
}

TEST(PersistenceDomainTest, LossAllRevertsEverythingAndReportsItsBytes) {
  Node node(100);
  EXPECT_EQ(100u, node.domain().PowerFail(LossMode::kAll, 1));
  EXPECT_EQ(std::vector<uint8_t>(4096, kOld), node.Memory());
  // Afterwards everything is durable: a second failure reverts nothing.
  EXPECT_EQ(0u, node.domain().PowerFail(LossMode::kAll, 1));
}

TEST(PersistenceDomainTest, OnlyAPersistentFlushOfTheRangeMakesItDurable) {
  Node node(256);
  node.domain().Flush(node.Region(), 0, 64, FlushKind::kPersistent, /*placer=*/1, /*ordinal=*/3);
  node.domain().Flush(node.Region(), 64, 64, FlushKind::kVisibility, 1, 4);
  // [64, 128) (flushed to visibility only, so named apart) and [128, 256) are left.
  EXPECT_EQ(2u, node.domain().Report());
  EXPECT_EQ(192u, node.domain().PowerFail(LossMode::kAll, 1));
  std::vector<uint8_t> memory = node.Memory();
  EXPECT_EQ(std::vector<uint8_t>(64, kNew),
            std::vector<uint8_t>(memory.begin(), memory.begin() + 64));
  EXPECT_EQ(std::vector<uint8_t>(192, kOld),
            std::vector<uint8_t>(memory.begin() + 64, memory.begin() + 256));
}

TEST(PersistenceDomainTest, DramKeepsNothingAndReportsNothing) {
  DeviceCaps dram;
  dram.persistent_memory = false;
  Node node(64, dram);
  node.domain().Flush(node.Region(), 0, 64, FlushKind::kPersistent, 1, 3);
  node.domain().Persist(node.Region(), 0, 64);
  EXPECT_EQ(0u, node.domain().Report());
  EXPECT_EQ(64u, node.domain().PowerFail(LossMode::kAll, 1));
}

TEST(PersistenceDomainTest, ForgottenRegionIsNotReverted) {
  Node node(64);
  node.domain().ForgetRegion(kKey);
  EXPECT_EQ(0u, node.domain().PowerFail(LossMode::kAll, 1));
  std::vector<uint8_t> memory = node.Memory();
  EXPECT_EQ(std::vector<uint8_t>(64, kNew),
            std::vector<uint8_t>(memory.begin(), memory.begin() + 64));
}

}  // namespace
}  // namespace rpma_sim
