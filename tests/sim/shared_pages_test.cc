// Tests of moving heap pages into a shared mapping and back (sim/transport/shared_pages):
// the process keeps the mappings it had, and a thread reading the pages while they move
// always reads their bytes.
#include "sim/transport/shared_pages.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// How many mappings of this process overlap [begin, end) (a sanitizer's runtime maps
// memory of its own elsewhere meanwhile).
int MappingCountIn(const void* begin, const void* end) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == nullptr) return -1;
  int count = 0;
  char line[512];
  while (fgets(line, sizeof(line), maps) != nullptr) {
    uintptr_t start, stop;
    if (sscanf(line, "%lx-%lx", &start, &stop) == 2 && start < reinterpret_cast<uintptr_t>(end) &&
        reinterpret_cast<uintptr_t>(begin) < stop)
      ++count;
  }
  fclose(maps);
  return count;
}

// Whether the kernel moves a mapping and leaves the range mapped (MREMAP_DONTUNMAP).
bool KernelSetsMappingsAside() {
  void* range = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (range == MAP_FAILED) return false;
  void* aside = reinterpret_cast<void*>(
      syscall(SYS_mremap, range, kPage, kPage, MREMAP_MAYMOVE | 4 /* MREMAP_DONTUNMAP */, 0));
  if (aside != MAP_FAILED) munmap(aside, kPage);
  munmap(range, kPage);
  return aside != MAP_FAILED;
}

// Private anonymous memory, as a large heap block is, every page written.
class SharedPagesTest : public ::testing::Test {
 protected:
  static constexpr size_t kPages = 768;
  void SetUp() override {
    void* memory =
        mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, memory);
    base_ = static_cast<uint8_t*>(memory);
    for (size_t i = 0; i < kPages * kPage; ++i) base_[i] = static_cast<uint8_t>(i / kPage);
  }
  void TearDown() override { munmap(base_, kPages * kPage); }

  // Whether every byte of page `page` still holds what SetUp put there.
  bool PageIntact(size_t page) const {
    for (size_t i = 0; i < kPage; ++i)
      if (base_[page * kPage + i] != static_cast<uint8_t>(page)) return false;
    return true;
  }

  uint8_t* base_ = nullptr;
};

// Each registration's pages move in and back at an address of their own: the range's own
// mapping goes back with them, so the process has no more mappings than before (each move
// once left two, and a process that registered and deregistered buffers long enough ran out
// of them: vm.max_map_count, then malloc failed).
TEST_F(SharedPagesTest, MovingInAndBackLeavesNoMappingsBehind) {
  if (!KernelSetsMappingsAside()) GTEST_SKIP() << "no MREMAP_DONTUNMAP (Linux 5.7)";
  const uint8_t* end = base_ + kPages * kPage;
  const int before = MappingCountIn(base_, end);
  ASSERT_GT(before, 0);
  for (size_t i = 0; i + 2 < kPages; i += 3) {
    std::unique_ptr<SharedPages> pages =
        SharedPages::Share(base_ + i * kPage, 2 * kPage, PageMoves::kAllowed);
    ASSERT_NE(nullptr, pages) << "page " << i << " did not move";
    FileBacking backing;
    ASSERT_TRUE(pages->BackingOf(base_ + i * kPage, 2 * kPage, &backing));
    // Moved: the range splits the mapping around it (its own is set aside elsewhere).
    const int moved = MappingCountIn(base_, end);
    EXPECT_GT(moved, before);
    EXPECT_LE(moved, before + 2);
    pages.reset();  // moved back
    ASSERT_TRUE(PageIntact(i) && PageIntact(i + 1)) << "page " << i;
  }
  EXPECT_EQ(before, MappingCountIn(base_, end));
  EXPECT_EQ(0u, SharedPages::ExtentCount());
}

// A thread that keeps reading the pages while they move in and back reads their bytes every
// time: for the moment the pages are set aside a load waits, as a store does, and is never
// answered with a page of zeros.
TEST_F(SharedPagesTest, LoadsDuringMovesReadThePagesBytes) {
  std::atomic<bool> done{false};
  std::atomic<long> wrong{0}, reads{0};
  const volatile uint8_t* watched = base_ + 5 * kPage;
  std::thread reader([&] {
    while (!done.load(std::memory_order_relaxed)) {
      for (size_t i = 0; i < kPage; i += 512) wrong += watched[i] != 5;
      ++reads;
    }
  });
  for (int round = 0; round < 2000; ++round) {
    std::unique_ptr<SharedPages> pages =
        SharedPages::Share(base_ + 4 * kPage, 3 * kPage, PageMoves::kAllowed);
    ASSERT_NE(nullptr, pages);
  }
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(0, wrong.load());
  EXPECT_TRUE(PageIntact(4) && PageIntact(5) && PageIntact(6));
}

// The protection of the part of /proc/self/maps that holds `address` ("rw-p", ...).
std::string PermsOf(const void* address) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == nullptr) return "";
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  char line[512];
  std::string perms;
  while (perms.empty() && fgets(line, sizeof(line), maps) != nullptr) {
    uintptr_t start, end;
    char found[5];
    if (sscanf(line, "%lx-%lx %4s", &start, &end, found) == 3 && start <= at && at < end)
      perms = found;
  }
  fclose(maps);
  return perms;
}

// A protection the application gave moved pages stays when they move back.
TEST_F(SharedPagesTest, TheApplicationsProtectionStaysWhenThePagesMoveBack) {
  std::unique_ptr<SharedPages> pages =
      SharedPages::Share(base_ + 10 * kPage, 3 * kPage, PageMoves::kAllowed);
  ASSERT_NE(nullptr, pages);
  ASSERT_EQ(0, mprotect(base_ + 11 * kPage, kPage, PROT_READ));
  EXPECT_EQ("r--s", PermsOf(base_ + 11 * kPage));
  pages.reset();
  EXPECT_EQ("rw-p", PermsOf(base_ + 10 * kPage));
  EXPECT_EQ("r--p", PermsOf(base_ + 11 * kPage));
  EXPECT_EQ("rw-p", PermsOf(base_ + 12 * kPage));
  EXPECT_TRUE(PageIntact(10) && PageIntact(11) && PageIntact(12));
  ASSERT_EQ(0, mprotect(base_ + 11 * kPage, kPage, PROT_READ | PROT_WRITE));
}

// A fork after the application unmapped moved pages (all of a range, or part of one), or made
// them inaccessible, while they were still registered: the parent goes on, and the child
// keeps the holes, and its own copy of the rest, with its bytes and protection.
TEST_F(SharedPagesTest, AForkAfterTheApplicationUnmappedOrHidMovedPages) {
  std::unique_ptr<SharedPages> unmapped =
      SharedPages::Share(base_ + 20 * kPage, 2 * kPage, PageMoves::kAllowed);
  std::unique_ptr<SharedPages> hidden =
      SharedPages::Share(base_ + 30 * kPage, 2 * kPage, PageMoves::kAllowed);
  ASSERT_NE(nullptr, unmapped);
  ASSERT_NE(nullptr, hidden);
  std::unique_ptr<SharedPages> partly_unmapped =
      SharedPages::Share(base_ + 40 * kPage, 4 * kPage, PageMoves::kAllowed);
  ASSERT_NE(nullptr, partly_unmapped);
  ASSERT_EQ(0, munmap(base_ + 20 * kPage, 2 * kPage));
  ASSERT_EQ(0, mprotect(base_ + 30 * kPage, 2 * kPage, PROT_NONE));
  ASSERT_EQ(0, munmap(base_ + 40 * kPage, kPage));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = PermsOf(base_ + 20 * kPage).empty() && PermsOf(base_ + 30 * kPage) == "---p";
    ok = ok && mprotect(base_ + 30 * kPage, 2 * kPage, PROT_READ | PROT_WRITE) == 0;
    ok = ok && PageIntact(30) && PageIntact(31);
    // What is left of a range partly unmapped is the child's own too.
    ok = ok && PermsOf(base_ + 40 * kPage).empty() && PermsOf(base_ + 42 * kPage) == "rw-p";
    memset(base_ + 42 * kPage, 0xEE, kPage);
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  ASSERT_EQ(0, mprotect(base_ + 30 * kPage, 2 * kPage, PROT_READ | PROT_WRITE));
  EXPECT_TRUE(PageIntact(30) && PageIntact(31));
  EXPECT_TRUE(PageIntact(42)) << "the child's store reached the parent";
  unmapped.reset();
  hidden.reset();
  partly_unmapped.reset();
  EXPECT_EQ("rw-p", PermsOf(base_ + 41 * kPage));  // what was left moved back
  EXPECT_TRUE(PageIntact(41) && PageIntact(42) && PageIntact(43));
  EXPECT_EQ("", PermsOf(base_ + 20 * kPage));  // the hole stays a hole
  EXPECT_EQ("rw-p", PermsOf(base_ + 30 * kPage));
}

// Whether this process has the file with `inode` open.
bool HasFileOpen(uint64_t inode) {
  struct stat status;
  for (int fd = 0; fd < 4096; ++fd)
    if (fstat(fd, &status) == 0 && status.st_ino == inode) return true;
  return false;
}

// What the child of the test below checks, as an exit status: 0 if all holds.
int RegionFilesFillUpAndClose() {
  SharedPages::SetSlotsPerFileForTest(2);
  std::vector<std::unique_ptr<SharedPages>> regions;
  std::vector<uint64_t> inodes;
  for (int i = 0; i < 5; ++i) {
    void* range =
        mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (range == MAP_FAILED) return 10;
    memset(range, i + 1, 2 * kPage);
    regions.push_back(SharedPages::Share(range, 2 * kPage, PageMoves::kAllowed));
    FileBacking backing;
    if (regions.back() == nullptr || !regions.back()->BackingOf(range, 2 * kPage, &backing))
      return 11;
    inodes.push_back(backing.inode);
  }
  // Two ranges a file: three files, each open.
  if (inodes[0] != inodes[1] || inodes[2] != inodes[3] || inodes[0] == inodes[2] ||
      inodes[2] == inodes[4] || inodes[0] == inodes[4])
    return 12;
  if (SharedPages::FileCount() != 3 || !HasFileOpen(inodes[0])) return 13;
  // The first file is full: closed once both its ranges moved back.
  regions[0].reset();
  if (!HasFileOpen(inodes[0])) return 14;
  regions[1].reset();
  if (HasFileOpen(inodes[0]) || SharedPages::FileCount() != 2) return 15;
  // The last has a slot left: it stays open for the next range.
  regions[4].reset();
  if (!HasFileOpen(inodes[4])) return 16;
  regions[2].reset();
  regions[3].reset();
  if (HasFileOpen(inodes[2]) || SharedPages::FileCount() != 1) return 17;
  return 0;
}

// A region file whose slots are all taken is not given another range: the next moves into
// a new file, and the full one is closed once its last range moves back. (In a fork child,
// whose table starts empty, with two slots a file.)
TEST(SharedPagesFileTest, AFullRegionFileIsClosedOnceItsLastRangeMovesBack) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(RegionFilesFillUpAndClose());
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(0, WEXITSTATUS(status));
}

}  // namespace
}  // namespace rpma_sim
