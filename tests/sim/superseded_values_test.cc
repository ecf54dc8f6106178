// superseded_values_test.cc -- the overwritten values of connections: keeping, cutting
// (whole, a head, a tail, a middle), taking in order, and the bound.
#include "sim/pmem/superseded_values.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rpma_sim {
namespace {

class SupersededValuesTest : public ::testing::Test {
 protected:
  SupersededValuesTest() : memory_(256) {
    for (size_t i = 0; i < memory_.size(); ++i) memory_[i] = static_cast<char>('a' + i % 26);
  }

  uintptr_t At(size_t offset) { return reinterpret_cast<uintptr_t>(memory_.data()) + offset; }
  void Keep(uint64_t placer, size_t offset, size_t length) {
    values_.Keep(placer, At(offset), length);
  }
  // "offset:bytes" for each value `placer` kept, oldest first; takes them.
  std::string Take(uint64_t placer) {
    std::string out;
    values_.TakeOf(placer, [&](uintptr_t address, const uint8_t* bytes, uint64_t length) {
      out += std::to_string(address - At(0)) + ":" +
             std::string(reinterpret_cast<const char*>(bytes), length) + " ";
    });
    return out;
  }

  std::vector<char> memory_;
  SupersededValues values_;
};

TEST_F(SupersededValuesTest, KeepsACopyOfTheBytesAsTheyAreNow) {
  Keep(1, 0, 4);
  memory_[0] = 'X';
  EXPECT_EQ(4u, values_.bytes());
  EXPECT_EQ("0:abcd ", Take(1));
  EXPECT_TRUE(values_.empty());
  EXPECT_EQ(0u, values_.bytes());
}

TEST_F(SupersededValuesTest, TakesOnlyItsPlacersValuesOldestFirst) {
  Keep(1, 10, 2);
  Keep(2, 20, 2);
  Keep(1, 0, 2);
  EXPECT_EQ("10:kl 0:ab ", Take(1));
  EXPECT_EQ(1u, values_.size());
  EXPECT_EQ("20:uv ", Take(2));
}

TEST_F(SupersededValuesTest, CutRemovesWholeHeadTailAndMiddle) {
  Keep(1, 0, 4);   // whole: cut
  Keep(1, 10, 4);  // its tail cut: "kl" left
  Keep(1, 20, 4);  // its head cut: "wx" left
  Keep(1, 30, 6);  // its middle cut: "ef" and "ij" left
  values_.Cut(At(0), At(4));
  values_.Cut(At(12), At(22));
  values_.Cut(At(32), At(34));
  EXPECT_EQ(8u, values_.bytes());
  EXPECT_EQ("10:kl 22:wx 30:ef 34:ij ", Take(1));
}

TEST_F(SupersededValuesTest, ATakenValueCutsOlderValuesOfItsBytesNotNewerOnes) {
  Keep(1, 0, 8);  // oldest: its middle is newer connection 2's since
  Keep(2, 2, 4);
  Keep(3, 4, 4);  // newer than 2's: stays
  EXPECT_EQ("2:cdef ", Take(2));
  EXPECT_EQ("0:ab 6:gh ", Take(1));
  EXPECT_EQ("4:efgh ", Take(3));
}

TEST_F(SupersededValuesTest, DropOfForgetsOnlyThatPlacer) {
  Keep(1, 0, 2);
  Keep(2, 4, 2);
  values_.DropOf(1);
  EXPECT_EQ("", Take(1));
  EXPECT_EQ("4:ef ", Take(2));
}

TEST_F(SupersededValuesTest, PastTheBoundTheOldestAreDropped) {
  std::vector<char> big(SupersededValues::kMaxBytes / 2);
  values_.Keep(1, reinterpret_cast<uintptr_t>(big.data()), big.size());
  values_.Keep(2, reinterpret_cast<uintptr_t>(big.data()), big.size());
  Keep(3, 0, 1);  // does not fit: connection 1's, the oldest, goes
  EXPECT_EQ(big.size(), values_.dropped());
  EXPECT_EQ(big.size() + 1, values_.bytes());
  EXPECT_EQ("", Take(1));
  EXPECT_EQ("0:a ", Take(3));
  // One value larger than the bound is not kept at all.
  std::vector<char> huge(SupersededValues::kMaxBytes + 1);
  values_.Keep(4, reinterpret_cast<uintptr_t>(huge.data()), huge.size());
  EXPECT_EQ(big.size() + huge.size(), values_.dropped());
  EXPECT_EQ(big.size(), values_.bytes());
}

}  // namespace
}  // namespace rpma_sim
