// Tests of the crash journal's file: what it reads back, and what it refuses.
#include "sim/pmem/crash_journal.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/pmem/crash_explorer.h"
#include "sim/pmem/crash_lint.h"

namespace rpma_sim {
namespace {

class CrashJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = getenv("TEST_TMPDIR");
    path_ = std::string(dir != nullptr ? dir : "/tmp") + "/journal." + std::to_string(getpid()) +
            "." + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override { unlink(path_.c_str()); }

  static CrashRegion Region(uint32_t key, uint64_t length) {
    CrashRegion region;
    region.key = key;
    region.ordinal = 1;
    region.address = 0x10000;
    region.length = length;
    region.final_image.assign(length, 0xAA);
    return region;
  }

  static CrashEvent Placement(uint32_t key, uint64_t begin, uint64_t end) {
    CrashEvent event;
    event.point = 1;
    event.range = CrashSpan{key, begin, end};
    event.overwritten.assign(end - begin, 0);
    return event;
  }

  // A 64-byte region and one flush, which made the 3 bytes {1, 2, 3} at `begin` durable under
  // bytes still placed.
  static CrashJournal WithADurableValueAt(uint64_t begin) {
    CrashJournal journal;
    journal.regions.push_back(Region(0x1001, 64));
    CrashEvent flush;
    flush.point = 2;
    flush.kind = CrashEventKind::kFlush;
    flush.range = CrashSpan{0x1001, 0, 8};
    flush.durable_values.push_back(CrashValue{0x1001, begin, {1, 2, 3}});
    journal.events.push_back(flush);
    return journal;
  }

  std::string path_;
};

TEST_F(CrashJournalTest, ReadsBackWhatItWrote) {
  CrashJournal written;
  written.node = 7;
  written.regions.push_back(Region(0x1001, 64));
  written.events.push_back(Placement(0x1001, 8, 16));
  std::string error;
  ASSERT_TRUE(written.WriteTo(path_, &error)) << error;
  CrashJournal read;
  ASSERT_TRUE(CrashJournal::ReadFrom(path_, &read, &error)) << error;
  EXPECT_EQ(7u, read.node);
  ASSERT_EQ(1u, read.regions.size());
  EXPECT_EQ(written.regions[0].final_image, read.regions[0].final_image);
  ASSERT_EQ(1u, read.events.size());
  EXPECT_EQ(16u, read.events[0].range.end);
}

TEST_F(CrashJournalTest, ReadsBackDurableValues) {
  CrashJournal written = WithADurableValueAt(40);
  std::string error;
  ASSERT_TRUE(written.WriteTo(path_, &error)) << error;
  CrashJournal read;
  ASSERT_TRUE(CrashJournal::ReadFrom(path_, &read, &error)) << error;
  ASSERT_EQ(1u, read.events.size());
  ASSERT_EQ(1u, read.events[0].durable_values.size());
  EXPECT_EQ(40u, read.events[0].durable_values[0].begin);
  EXPECT_EQ((std::vector<uint8_t>{1, 2, 3}), read.events[0].durable_values[0].bytes);
}

// A durable value past the end of its region would make the explorer write outside an image.
TEST_F(CrashJournalTest, RefusesADurableValueOutsideItsRegion) {
  CrashJournal written = WithADurableValueAt(62);
  std::string error;
  ASSERT_TRUE(written.WriteTo(path_, &error)) << error;
  CrashJournal read;
  EXPECT_FALSE(CrashJournal::ReadFrom(path_, &read, &error));
}

// Two regions with one key: events are checked against the first, and the explorer would
// rebuild the second (a shorter one: a copy past its image). Refused as damaged.
TEST_F(CrashJournalTest, RefusesTwoRegionsWithOneKey) {
  CrashJournal written;
  written.regions.push_back(Region(0x1001, 4096));
  written.regions.push_back(Region(0x1001, 8));
  written.events.push_back(Placement(0x1001, 1024, 2048));
  std::string error;
  ASSERT_TRUE(written.WriteTo(path_, &error)) << error;
  CrashJournal read;
  EXPECT_FALSE(CrashJournal::ReadFrom(path_, &read, &error));
  EXPECT_NE(std::string::npos, error.find("damaged")) << error;
}

// A placement past the end of its region is refused too (it would write outside the image).
TEST_F(CrashJournalTest, RefusesAPlacementOutsideItsRegion) {
  CrashJournal written;
  written.regions.push_back(Region(0x1001, 64));
  written.events.push_back(Placement(0x1001, 32, 128));
  std::string error;
  ASSERT_TRUE(written.WriteTo(path_, &error)) << error;
  CrashJournal read;
  EXPECT_FALSE(CrashJournal::ReadFrom(path_, &read, &error));
}

// Explores `journal` with the torn lines, in at most 1 GiB and 20 s, then exits 0.
[[noreturn]] void ExploreLinesInBoundedMemoryAndExit(const CrashJournal& journal) {
  const rlimit memory{1ull << 30, 1ull << 30};
  setrlimit(RLIMIT_AS, &memory);
  alarm(20);
  CrashExploreOptions options;
  options.lines = true;
  CrashExploreSummary summary;
  std::string error;
  ExploreCrashStates(
      journal, options, [](const CrashState&) { return true; }, &summary, &error);
  _exit(0);
}

// A journal is read from a file: the address it gives a region must not make the explorer
// loop. A region at the top of the address space (its torn lines' addresses wrap past 2^64)
// is either refused as damaged or explored in bounded time and memory.
TEST_F(CrashJournalTest, ARegionAtTheTopOfTheAddressSpaceIsRefusedOrExploredInBoundedMemory) {
  CrashJournal written;
  CrashRegion region = Region(0x1001, 8);
  region.address = 0xFFFFFFFFFFFFFFF0ull;
  written.regions.push_back(region);
  written.events.push_back(Placement(0x1001, 0, 8));
  std::string error;
  ASSERT_TRUE(written.WriteTo(path_, &error)) << error;
  CrashJournal read;
  if (!CrashJournal::ReadFrom(path_, &read, &error)) {
    EXPECT_NE(std::string::npos, error.find("damaged")) << error;
    return;
  }
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(ExploreLinesInBoundedMemoryAndExit(read), ::testing::ExitedWithCode(0), "");
}

// An empty flush (length 0, or at the region's end) was never preceded by a flush of its
// range: the lint must not say it was "flushed twice" by a "point 0".
TEST_F(CrashJournalTest, LintDoesNotCallAnEmptyFlushASecondFlushByPointZero) {
  CrashJournal journal;
  journal.regions.push_back(Region(0x1001, 64));
  CrashEvent flush;
  flush.point = 1;
  flush.kind = CrashEventKind::kFlush;
  flush.persistent = true;
  flush.range = CrashSpan{0x1001, 16, 16};
  journal.events.push_back(flush);
  const std::vector<std::string> findings = LintCrashJournal(journal);
  ASSERT_EQ(1u, findings.size());
  EXPECT_EQ(std::string::npos, findings[0].find("flushed twice")) << findings[0];
  EXPECT_EQ(std::string::npos, findings[0].find("point 0")) << findings[0];
}

}  // namespace
}  // namespace rpma_sim
