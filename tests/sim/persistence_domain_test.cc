// persistence_domain_test.cc -- the persistence model of one node without a fabric: torn
// power failures replay from the seed, what survives each flush, and the report's count.
#include "sim/pmem/persistence_domain.h"

#include "sim/pmem/crash_explorer.h"

#include <gtest/gtest.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

namespace rpma_sim {
namespace {

constexpr uint8_t kOld = 0x11;
constexpr uint8_t kNew = 0xEE;
constexpr uint32_t kKey = 0x1234;

// A 4 KiB region (64-byte aligned) on a fresh node: armed, every byte kOld, then `len` bytes
// (if any) at 0 placed by connection 1 and overwritten with kNew.
class Node {
 public:
  explicit Node(uint64_t len, DeviceCaps caps = DeviceCaps()) : domain_(caps) {
    domain_.Arm();
    memset(memory_, kOld, sizeof(memory_));
    if (len > 0) Write(/*placer=*/1, 0, len, kNew);
  }

  // Connection `placer`'s write of `value` to [offset, offset + len), its first request,
  // through the registration of the memory that has remote key `key`.
  void Write(uint64_t placer, uint64_t offset, uint64_t len, uint8_t value, uint32_t key = kKey) {
    domain_.Place(PlacedRegion{key, memory_, sizeof(memory_)}, offset, len,
                  Placement{placer, 1, 1, PlacedBy::kWrite, false});
    memset(memory_ + offset, value, len);
  }
  // Connection `placer`'s PERSISTENT flush of 8 bytes far from the written ones: under flush
  // scope qp it drains every earlier write of the connection.
  void FlushElsewhere(uint64_t placer) {
    domain_.Flush(Region(), 2048, 8, FlushKind::kPersistent, placer, /*ordinal=*/2);
  }
  // Starts recording the node's crash points (its memory is anonymous).
  void Record() {
    domain_.StartRecording(/*node=*/1,
                           [](const void*, uint64_t, std::string*, uint64_t*) { return false; });
  }
  // What the first `len` bytes hold after a power failure that reverts everything.
  std::vector<uint8_t> AfterPowerFailure(uint64_t len) {
    domain_.PowerFail(LossMode::kAll, 1);
    return std::vector<uint8_t>(memory_, memory_ + len);
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

// The image of the crash explorer's last state of `journal` (a failure after the last
// point) in *last, and that state's point in *point.
void LastExploredState(const CrashJournal& journal, std::vector<uint8_t>* last, uint64_t* point) {
  CrashExploreSummary summary;
  std::string error;
  ASSERT_TRUE(ExploreCrashStates(
      journal, CrashExploreOptions(),
      [&](const CrashState& state) {
        if (state.point > *point) *last = (*state.images)[0];
        *point = std::max(*point, state.point);
        return true;
      },
      &summary, &error))
      << error;
}

DeviceCaps FlushScopeQp() {
  DeviceCaps caps;
  caps.flush_scope_qp = true;
  return caps;
}

constexpr uint8_t kNewer = 0x77;
constexpr uint8_t kNewest = 0x55;

// Connection 1 wrote, connection 2 wrote over it, neither flushed; then connection 1's flush
// drains its write: the bytes hold its value or a newer one, never the one before both.
TEST(PersistenceDomainTest, FlushScopeQpKeepsAWriteThatAnotherConnectionWroteOver) {
  Node node(64, FlushScopeQp());
  node.Write(2, 0, 32, kNewer);
  node.FlushElsewhere(1);
  std::vector<uint8_t> expected(64, kNew);  // connection 2's part was not made durable
  EXPECT_EQ(expected, node.AfterPowerFailure(64));
}

TEST(PersistenceDomainTest, FlushScopeQpKeepsAWriteOverwrittenThroughAnotherRegion) {
  Node node(64, FlushScopeQp());
  node.Write(2, 0, 64, kNewer, /*key=*/kKey + 1);  // the same memory registered again
  node.FlushElsewhere(1);
  EXPECT_EQ(std::vector<uint8_t>(64, kNew), node.AfterPowerFailure(64));
}

TEST(PersistenceDomainTest, FlushScopeQpNewerConnectionsFlushWinsInEitherOrder) {
  for (bool newer_first : {false, true}) {
    SCOPED_TRACE(newer_first ? "connection 2 flushes first" : "connection 1 flushes first");
    Node node(64, FlushScopeQp());
    node.Write(2, 0, 64, kNewer);
    node.FlushElsewhere(newer_first ? 2 : 1);
    node.FlushElsewhere(newer_first ? 1 : 2);
    EXPECT_EQ(std::vector<uint8_t>(64, kNewer), node.AfterPowerFailure(64));
  }
}

TEST(PersistenceDomainTest, FlushScopeQpOlderFlushAfterANewerOneKeepsTheNewer) {
  Node node(64, FlushScopeQp());
  node.Write(2, 0, 64, kNewer);
  node.Write(3, 0, 64, kNewest);
  node.FlushElsewhere(2);  // kNewer is durable: connection 1's older kNew no longer counts
  node.FlushElsewhere(1);
  EXPECT_EQ(std::vector<uint8_t>(64, kNewer), node.AfterPowerFailure(64));
}

TEST(PersistenceDomainTest, FlushScopeQpValueEndsWhenItsBytesAreMadeDurable) {
  Node node(64, FlushScopeQp());
  node.Write(2, 0, 64, kNewer);
  node.domain().Persist(node.Region(), 0, 64);  // kNewer is durable
  node.Write(3, 0, 64, kNewest);
  node.FlushElsewhere(1);  // its kNew is older than the durable kNewer
  EXPECT_EQ(std::vector<uint8_t>(64, kNewer), node.AfterPowerFailure(64));
}

TEST(PersistenceDomainTest, FlushScopeQpEndedConnectionFlushesNothing) {
  Node node(64, FlushScopeQp());
  node.Write(2, 0, 64, kNewer);
  node.domain().EndPlacer(1, "connection 1");
  node.FlushElsewhere(1);
  EXPECT_EQ(std::vector<uint8_t>(64, kOld), node.AfterPowerFailure(64));
}

// A recording of the same: the crash explorer's state after the last point is what the power
// failure leaves.
TEST(PersistenceDomainTest, FlushScopeQpExplorerAgreesWithThePowerFailure) {
  Node node(0, FlushScopeQp());
  node.Record();
  node.Write(1, 0, 64, kNew);
  node.Write(2, 0, 32, kNewer);
  node.FlushElsewhere(1);
  std::vector<uint8_t> last;
  uint64_t last_point = 0;
  ASSERT_NO_FATAL_FAILURE(LastExploredState(node.domain().StopRecording(), &last, &last_point));
  EXPECT_EQ(4u, last_point);  // after the two writes and the flush (points 1 to 3)
  std::vector<uint8_t> after = node.AfterPowerFailure(4096);
  EXPECT_EQ(kNew, after[0]);
  EXPECT_EQ(after, last);
}

TEST(PersistenceDomainTest, FlushScopeRangeDoesNotDrainOverwrittenWrites) {
  Node node(64);
  node.Write(2, 0, 64, kNewer);
  node.FlushElsewhere(1);
  EXPECT_EQ(std::vector<uint8_t>(64, kOld), node.AfterPowerFailure(64));
}

// Connection 1's value superseded by connection 2, then written again by connection 1 itself:
// its flush makes its newest write durable, in the power failure and in the explorer alike
// (which applies the drained older value first, as the flush does).
TEST(PersistenceDomainTest, FlushScopeQpExplorerAgreesWhenTheFlushingConnectionWroteAgain) {
  Node node(0, FlushScopeQp());
  node.Record();
  node.Write(1, 0, 64, kNew);
  node.Write(2, 0, 64, kNewer);
  node.Write(1, 0, 64, kNewest);
  node.FlushElsewhere(1);
  std::vector<uint8_t> last;
  uint64_t last_point = 0;
  ASSERT_NO_FATAL_FAILURE(LastExploredState(node.domain().StopRecording(), &last, &last_point));
  std::vector<uint8_t> after = node.AfterPowerFailure(4096);
  EXPECT_EQ(kNewest, after[0]);
  ASSERT_EQ(after.size(), last.size());
  EXPECT_EQ(after[0], last[0]) << "explorer's durable image after the flush";
}

// The same memory registered twice. Connection 2 wrote over connection 1's write through the
// other registration and flushed (flush scope qp): its value is durable in both, so the
// power failure does not put back connection 1's pre-image from the first registration.
TEST(PersistenceDomainTest, FlushScopeQpNewerWriteThroughAnotherRegionFlushedSurvives) {
  Node node(64, FlushScopeQp());
  node.Write(2, 0, 64, kNewer, /*key=*/kKey + 1);
  node.FlushElsewhere(2);
  EXPECT_EQ(std::vector<uint8_t>(64, kNewer), node.AfterPowerFailure(64));
}

// Connection 1 wrote, connection 2 wrote over it through the other registration, connection
// 1 wrote again and flushed: its last write is durable in both registrations.
TEST(PersistenceDomainTest, FlushScopeQpRewriteAfterAnotherRegionsWriteIsDurable) {
  Node node(64, FlushScopeQp());
  node.Write(2, 0, 64, kNewer, /*key=*/kKey + 1);
  node.Write(1, 0, 64, kNewest);
  node.FlushElsewhere(1);
  EXPECT_EQ(std::vector<uint8_t>(64, kNewest), node.AfterPowerFailure(64));
}

}  // namespace
}  // namespace rpma_sim
