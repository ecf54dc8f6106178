// region_file_review_test.cc -- review of 57ec861 (one region file per process, a slot per
// range): what a slot reused by the next region, or a slot never reused, does to memory the
// application or a child still holds.
//
// Over TCP and in process nothing moves and the same tests hold.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/common/moved_pages.h"
#include "tests/common/test_support.h"

namespace {

constexpr size_t kPage = 4096;
constexpr int kRemoteUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC;

bool AllBytes(const void* address, size_t length, uint8_t value) {
  const uint8_t* bytes = static_cast<const uint8_t*>(address);
  for (size_t i = 0; i < length; ++i)
    if (bytes[i] != value) return false;
  return true;
}

char* NewPages(size_t pages, uint8_t fill) {
  void* area =
      mmap(nullptr, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) return nullptr;
  memset(area, fill, pages * kPage);
  return static_cast<char*>(area);
}

// The descriptor of this process's file with `inode`, or -1.
int FdOfInode(unsigned long long inode) {
  struct stat status;
  for (int fd = 0; fd < 65536; ++fd)
    if (fstat(fd, &status) == 0 && status.st_ino == inode) return fd;
  return -1;
}

// The bytes the file behind `fd` holds in memory (its allocated blocks).
long long AllocatedBytes(int fd) {
  struct stat status;
  if (fstat(fd, &status) != 0) return -1;
  return static_cast<long long>(status.st_blocks) * 512;
}

class RegionFileReviewTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer_)); }
  void TearDown() override {
    if (peer_ != nullptr) EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  rpma_peer* peer_ = nullptr;
};

// docs/differences.md: "A child made without fork handlers (_Fork(), a raw clone) shares such
// pages with its parent until the region is deregistered". Once the parent deregisters the
// region, its slot of the region file goes back to the free list, and the parent's next
// region takes the same slot: the child's mapping at the old region's address now is the new
// region's memory. The child reads the new region's bytes, and its stores land in it. (Before
// 57ec861 each region had a memfd of its own, emptied and closed at deregistration: the
// child's mapping reached nothing of the parent's any more.)
TEST_F(RegionFileReviewTest, AChildWithoutForkHandlersDoesNotReachTheParentsNextRegion) {
  constexpr size_t kPages = 4;
  constexpr size_t kSize = kPages * kPage;
  char* old_region = NewPages(kPages, 0x11);
  ASSERT_NE(nullptr, old_region);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, old_region, kSize, kRemoteUsage, &mr));
  EXPECT_EQ(PagesMoveHere(), Moved(old_region));
  int go[2], done[2];
  ASSERT_EQ(0, pipe(go));
  ASSERT_EQ(0, pipe(done));
  // As posix_spawn's or a raw clone's child would: no pthread_atfork handler runs.
  pid_t child = _Fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(10);
    // What the child sees at the old region's address once the parent moved on: not the
    // parent's new region.
    uint8_t seen = static_cast<uint8_t>(old_region[0]);
    memset(old_region, 0xEE, kSize);  // the child's own stores
    if (write(done[1], &seen, 1) != 1) _exit(11);
    _exit(0);
  }
  close(go[0]);
  close(done[1]);
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  char* new_region = NewPages(kPages, 0x44);
  ASSERT_NE(nullptr, new_region);
  rpma_mr_local* new_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, new_region, kSize, kRemoteUsage, &new_mr));
  EXPECT_EQ(PagesMoveHere(), Moved(new_region));
  ASSERT_EQ(1, write(go[1], "g", 1));
  uint8_t seen = 0;
  ASSERT_EQ(1, read(done[0], &seen, 1));
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(0x44, seen) << "the child saw the parent's new region at its old region's address";
  EXPECT_TRUE(AllBytes(new_region, kSize, 0x44))
      << "the child's stores to the old region's address reached the parent's new region "
         "(first byte now 0x"
      << std::hex << (static_cast<unsigned>(static_cast<uint8_t>(new_region[0]))) << ")";
  EXPECT_TRUE(AllBytes(old_region, kSize, 0x11));
  ASSERT_EQ(0, rpma_mr_dereg(&new_mr));
  EXPECT_TRUE(AllBytes(new_region, kSize, 0x44));
  close(go[1]);
  close(done[0]);
  munmap(old_region, kSize);
  munmap(new_region, kSize);
}

// The application grows (or realloc moves) a registered mapping with mremap(2), deregisters
// the region, and then frees the memory (munmap, as free() does for a large block). The
// slot was retired at deregistration (the application still mapped part of it), and
// nothing ever empties it afterwards: the pages stay allocated in the region file, which
// the process never closes, for as long as the process lives. (Before 57ec861 the region's
// own memfd was closed at deregistration, so its pages went with the last mapping.)
TEST_F(RegionFileReviewTest, MemoryGrownWithMremapIsGivenBackOnceUnmapped) {
  if (!PagesMoveHere()) GTEST_SKIP() << "nothing moves into a region file here";
  constexpr size_t kPages = 64;
  constexpr size_t kGrownPages = 4 * kPages;  // 1 MiB
  char* area = NewPages(kPages, 0x11);
  ASSERT_NE(nullptr, area);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, area, kPages * kPage, kRemoteUsage, &mr));
  ASSERT_TRUE(Moved(area));
  const int fd = FdOfInode(InodeAt(area));
  ASSERT_GE(fd, 0);
  char* grown =
      static_cast<char*>(mremap(area, kPages * kPage, kGrownPages * kPage, MREMAP_MAYMOVE));
  ASSERT_NE(MAP_FAILED, grown) << strerror(errno);
  memset(grown, 0x22, kGrownPages * kPage);  // the application uses all of it
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  ASSERT_EQ(0, munmap(grown, kGrownPages * kPage));
  // No mapping of the slot is left anywhere: nothing it held is reachable any more.
  EXPECT_EQ(0, AllocatedBytes(fd))
      << "the region file still holds " << AllocatedBytes(fd)
      << " bytes after every region was deregistered and the grown memory unmapped";
  // Each round leaks again: a loop of the same makes the process grow without bound.
  const long long after_one = AllocatedBytes(fd);
  for (int round = 0; round < 4; ++round) {
    char* again = NewPages(kPages, 0x33);
    ASSERT_NE(nullptr, again);
    ASSERT_EQ(0, rpma_mr_reg(peer_, again, kPages * kPage, kRemoteUsage, &mr));
    char* big =
        static_cast<char*>(mremap(again, kPages * kPage, kGrownPages * kPage, MREMAP_MAYMOVE));
    ASSERT_NE(MAP_FAILED, big) << strerror(errno);
    memset(big, 0x44, kGrownPages * kPage);
    ASSERT_EQ(0, rpma_mr_dereg(&mr));
    ASSERT_EQ(0, munmap(big, kGrownPages * kPage));
  }
  EXPECT_EQ(after_one, AllocatedBytes(fd))
      << "four more rounds of register, grow, deregister, unmap";
}


// The application unmaps one page of a registered region (docs/differences.md: the peer's
// writes to it still go to the region file) and deregisters the region. Over a connection in
// this process (both ends here), the initiator's mapping of the region's part of the file is
// among this process's mappings, so MoveBack takes it for the application's own (mremap) and
// retires the slot without emptying what that mapping covers; once the connection is gone
// nothing maps the slot and nothing ever empties it: the region's pages stay allocated in
// the region file for the life of the process.
TEST(RegionFileReviewPairTest, APartlyUnmappedRegionIsGivenBackAfterAPeerInThisProcessWroteIt) {
  if (!PagesMoveHere()) GTEST_SKIP() << "nothing moves into a region file here";
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  Registrations registrations;
  constexpr size_t kPages = 256;  // 1 MiB
  constexpr size_t kSize = kPages * kPage;
  Buffer* source = registrations.NewBuffer(pair.peer, kSize, RPMA_MR_USAGE_WRITE_SRC, 0x5A);
  ASSERT_NE(nullptr, source);
  char* region = NewPages(kPages, 0);
  ASSERT_NE(nullptr, region);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(pair.peer, region, kSize, kRemoteUsage, &mr));
  ASSERT_TRUE(Moved(region));
  const int fd = FdOfInode(InodeAt(region));
  ASSERT_GE(fd, 0);
  // What the file holds besides this region (other tests' leftovers, if any).
  const long long others = AllocatedBytes(fd) - static_cast<long long>(kSize);
  rpma_mr_remote* remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(RemoteFromDescriptor(mr, &remote));
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(pair.client, &cq));
  ASSERT_EQ(0, rpma_write(pair.client, remote, 0, source->mr, 0, kSize, RPMA_F_COMPLETION_ALWAYS,
                          nullptr));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(WaitForCompletion(cq, &wc));
  ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_TRUE(AllBytes(region, kSize, 0x5A));
  ASSERT_EQ(0, rpma_mr_remote_delete(&remote));
  ASSERT_EQ(0, munmap(region, kPage));  // the application gives up the first page
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_FALSE(Moved(region + kPage));
  EXPECT_TRUE(AllBytes(region + kPage, kSize - kPage, 0x5A));
  ASSERT_EQ(0, munmap(region + kPage, kSize - kPage));
  registrations.Release();
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
  // Nothing maps the region file's slot any more, and the region is gone.
  EXPECT_EQ(others, AllocatedBytes(fd))
      << "bytes the region file holds beyond what it held before the region moved";
}

}  // namespace
