// placed_ranges_test.cc -- the interval map of placed, not yet durable bytes: merging,
// overwriting, what counts as newly placed, making ranges durable, and the bound.
#include "sim/pmem/placed_ranges.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace rpma_sim {
namespace {

using Spans = std::vector<std::pair<uint64_t, uint64_t>>;

Placement By(uint64_t placer, uint64_t ordinal) {
  return Placement{placer, ordinal, ordinal, PlacedBy::kWrite, false};
}

// "[begin,end)=placer:first-last ..." for every range, in order.
std::string Dump(const PlacedRanges& ranges) {
  std::string out;
  for (const auto& entry : ranges.ranges()) {
    const Placement& p = entry.second.placement;
    out += "[" + std::to_string(entry.first) + "," + std::to_string(entry.second.end) +
           ")=" + std::to_string(p.placer) + ":" + std::to_string(p.first) + "-" +
           std::to_string(p.last) + (p.visibility_flushed ? "v" : "") + " ";
  }
  return out;
}

class PlacedRangesTest : public ::testing::Test {
 protected:
  void Place(uint64_t begin, uint64_t end, const Placement& placement) {
    ranges_.Place(begin, end, placement,
                  [this](uint64_t b, uint64_t e) { newly_.emplace_back(b, e); });
  }

  PlacedRanges ranges_;
  Spans newly_;  // what Place reported as durable until then
};

TEST_F(PlacedRangesTest, FirstPlacementIsAllNew) {
  Place(10, 20, By(1, 1));
  EXPECT_EQ("[10,20)=1:1-1 ", Dump(ranges_));
  EXPECT_EQ((Spans{{10, 20}}), newly_);
}

TEST_F(PlacedRangesTest, SameBytesAgainMergeOrdinalsAndAreNotNew) {
  Place(0, 64, By(1, 1));
  newly_.clear();
  Place(0, 64, By(1, 2));
  Place(8, 16, By(1, 3));
  EXPECT_EQ("[0,64)=1:1-3 ", Dump(ranges_));
  EXPECT_TRUE(newly_.empty());
}

TEST_F(PlacedRangesTest, AdjacentPlacementsOfOneConnectionMerge) {
  Place(0, 64, By(1, 1));
  Place(64, 128, By(1, 2));
  Place(192, 256, By(1, 3));
  Place(128, 192, By(1, 4));
  EXPECT_EQ("[0,256)=1:1-4 ", Dump(ranges_));
}

TEST_F(PlacedRangesTest, OverlapReportsOnlyTheGapsAsNew) {
  Place(10, 20, By(1, 1));
  Place(30, 40, By(1, 2));
  newly_.clear();
  Place(0, 50, By(2, 1));
  EXPECT_EQ((Spans{{0, 10}, {20, 30}, {40, 50}}), newly_);
  EXPECT_EQ("[0,50)=2:1-1 ", Dump(ranges_));
}

TEST_F(PlacedRangesTest, AnotherConnectionTakesOverTheMiddle) {
  Place(0, 100, By(1, 1));
  Place(40, 60, By(2, 7));
  EXPECT_EQ("[0,40)=1:1-1 [40,60)=2:7-7 [60,100)=1:1-1 ", Dump(ranges_));
}

TEST_F(PlacedRangesTest, MakeDurableSplitsAndCounts) {
  Place(0, 100, By(1, 1));
  EXPECT_EQ(20u, ranges_.MakeDurable(40, 60));
  EXPECT_EQ("[0,40)=1:1-1 [60,100)=1:1-1 ", Dump(ranges_));
  EXPECT_EQ(0u, ranges_.MakeDurable(40, 60));
  EXPECT_EQ(80u, ranges_.MakeDurable(0, 1000));
  EXPECT_TRUE(ranges_.empty());
}

TEST_F(PlacedRangesTest, MakeDurableOfOnePlacerOnly) {
  Place(0, 10, By(1, 1));
  Place(10, 20, By(2, 1));
  Place(20, 30, By(1, 2));
  EXPECT_EQ(20u, ranges_.MakeDurableOf(1));
  EXPECT_EQ("[10,20)=2:1-1 ", Dump(ranges_));
}

TEST_F(PlacedRangesTest, VisibilityFlushMarksOnlyItsPart) {
  Place(0, 100, By(1, 1));
  ranges_.MarkVisibilityFlushed(50, 200);
  EXPECT_EQ("[0,50)=1:1-1 [50,100)=1:1-1v ", Dump(ranges_));
  // A new write over marked bytes is not marked.
  Place(50, 60, By(1, 2));
  EXPECT_EQ("[0,60)=1:1-2 [60,100)=1:1-1v ", Dump(ranges_));
}

TEST_F(PlacedRangesTest, DisownKeepsTheBytesPlaced) {
  Place(0, 10, By(3, 1));
  ranges_.Disown(3);
  EXPECT_EQ("[0,10)=0:1-1 ", Dump(ranges_));
}

TEST_F(PlacedRangesTest, StaysWithinTheLimitSwallowingTheNearestGap) {
  // Every other byte pair placed: kMaxRanges separate ranges, then one more.
  for (uint64_t i = 0; i < PlacedRanges::kMaxRanges; ++i) Place(4 * i, 4 * i + 2, By(1, i + 1));
  EXPECT_EQ(PlacedRanges::kMaxRanges, ranges_.size());
  newly_.clear();
  uint64_t far = 4 * PlacedRanges::kMaxRanges + 1;
  Place(far, far + 2, By(2, 1));
  EXPECT_EQ(PlacedRanges::kMaxRanges, ranges_.size());
  // The new range's own bytes, then the gap it swallowed to its neighbour.
  ASSERT_EQ(2u, newly_.size());
  EXPECT_EQ(std::make_pair(far, far + 2), newly_[0]);
  EXPECT_EQ(std::make_pair(far - 3, far), newly_[1]);
  const auto& last = *ranges_.ranges().rbegin();
  EXPECT_EQ(far - 5, last.first);
  EXPECT_EQ(far + 2, last.second.end);
  EXPECT_EQ(2u, last.second.placement.placer);
}

// The ranges of each placer as ForEachOf finds them, and as a walk through all of them does:
// the index must say the same as the map after every kind of change.
void ExpectIndexMatches(const PlacedRanges& ranges, uint64_t placers) {
  for (uint64_t placer = 1; placer <= placers; ++placer) {
    std::vector<uint64_t> walked, indexed;
    for (const auto& entry : ranges.ranges())
      if (entry.second.placement.placer == placer) walked.push_back(entry.first);
    ranges.ForEachOf(placer, [&](uint64_t begin, const PlacedRanges::Range& range) {
      EXPECT_EQ(placer, range.placement.placer);
      indexed.push_back(begin);
    });
    ASSERT_EQ(walked, indexed) << "placer " << placer;
  }
}

TEST_F(PlacedRangesTest, ForEachOfFindsEachPlacersRangesThroughEveryChange) {
  std::mt19937_64 random(20261202);
  constexpr uint64_t kPlacers = 6;
  for (int step = 0; step < 20000; ++step) {
    uint64_t begin = random() % 4096, length = 1 + random() % 64, placer = 1 + random() % kPlacers;
    switch (random() % 8) {
      case 0:
        ranges_.MakeDurable(begin, begin + length);
        break;
      case 1:
        ranges_.MarkVisibilityFlushed(begin, begin + length);
        break;
      case 2:
        if (random() % 16 == 0) ranges_.MakeDurableOf(placer);
        break;
      case 3:
        if (random() % 16 == 0) ranges_.Disown(placer);
        break;
      default:
        Place(begin, begin + length, By(placer, step + 1));
        break;
    }
    if (step % 500 == 0) ASSERT_NO_FATAL_FAILURE(ExpectIndexMatches(ranges_, kPlacers));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectIndexMatches(ranges_, kPlacers));
  uint64_t bytes = 0;
  ranges_.ForEachOf(
      1, [&](uint64_t begin, const PlacedRanges::Range& range) { bytes += range.end - begin; });
  EXPECT_EQ(bytes, ranges_.MakeDurableOf(1));
  ranges_.ForEachOf(1, [](uint64_t, const PlacedRanges::Range&) { ADD_FAILURE() << "left"; });
  ASSERT_NO_FATAL_FAILURE(ExpectIndexMatches(ranges_, kPlacers));
}

TEST_F(PlacedRangesTest, ForEachOfAtTheLimitFollowsTheSwallowingRange) {
  for (uint64_t i = 0; i < PlacedRanges::kMaxRanges; ++i)
    Place(4 * i, 4 * i + 2, By(1 + i % 3, i + 1));
  uint64_t far = 4 * PlacedRanges::kMaxRanges + 1;
  Place(far, far + 2, By(4, 1));  // swallows its neighbour, which was another placer's
  ASSERT_NO_FATAL_FAILURE(ExpectIndexMatches(ranges_, 4));
  ranges_.Disown(4);
  ranges_.ForEachOf(4, [](uint64_t, const PlacedRanges::Range&) { ADD_FAILURE() << "left"; });
  ASSERT_NO_FATAL_FAILURE(ExpectIndexMatches(ranges_, 4));
}

}  // namespace
}  // namespace rpma_sim
