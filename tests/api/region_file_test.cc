// region_file_test.cc -- the file that registered heap pages move into (docs/transports.md):
// one per process, so registering memory takes at most one of the application's file
// descriptors however many regions it registers; a slot of it given to a new region after
// an old one is deregistered carries the peer's writes to the new region only; and a
// registered mapping the application grows with mremap(2) reaches no other region's pages.
//
// Over TCP and in process nothing moves and the same tests hold.
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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

// How many file descriptors this process has open.
int OpenFds() {
  int count = 0;
  for (int fd = 0; fd < 65536; ++fd) count += fcntl(fd, F_GETFD) != -1 ? 1 : 0;
  return count;
}

// A peer of the local device for a fork() child, which asserts nothing; null if it cannot
// be made.
rpma_peer* NewPeerInChild() {
  ibv_context* device = nullptr;
  rpma_peer* peer = nullptr;
  if (rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device) != 0 ||
      rpma_peer_new(device, &peer) != 0)
    return nullptr;
  return peer;
}

// A local peer (peer_) for each test.
class RegionFileTest : public PeerFixture {};

// Registering memory takes no file descriptor per region (ibv_reg_mr takes none): a server
// that registers a buffer or two per client must not run out of descriptors (EMFILE from
// its own open, accept or socket) because it registered memory. The pages of all regions
// share one file.
TEST_F(RegionFileTest, ManyRegionsTakeAtMostOneDescriptor) {
  constexpr int kRegions = 300;  // beyond a quarter of the usual limit of 1024
  char* buffers = NewPages(2 * kRegions, 1);
  ASSERT_NE(nullptr, buffers);
  const int before = OpenFds();
  std::vector<rpma_mr_local*> mrs(kRegions, nullptr);
  // Every other page, so that no two regions share a page or merge into one mapping.
  for (int i = 0; i < kRegions; ++i)
    ASSERT_EQ(0, rpma_mr_reg(peer_, buffers + 2 * i * kPage, kPage, kRemoteUsage, &mrs[i]));
  EXPECT_EQ(PagesMoveHere(), Moved(buffers));
  EXPECT_EQ(PagesMoveHere(), Moved(buffers + 2 * (kRegions - 1) * kPage));
  if (PagesMoveHere()) EXPECT_EQ(InodeAt(buffers), InodeAt(buffers + 2 * kPage));
  const int registered = OpenFds();
  EXPECT_LE(registered, before + 1) << kRegions << " registered regions";
  // The application, with a limit a little above what it had before registering, opens a
  // file of its own.
  struct rlimit limit;
  ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &limit));
  struct rlimit lowered = limit;
  lowered.rlim_cur = static_cast<rlim_t>(before + 16);
  ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &lowered));
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int open_errno = errno;
  ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &limit));
  EXPECT_GE(fd, 0) << "open: " << strerror(open_errno);
  if (fd >= 0) close(fd);
  for (rpma_mr_local*& mr : mrs) ASSERT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_FALSE(Moved(buffers));
  EXPECT_TRUE(AllBytes(buffers, 2 * kRegions * kPage, 1));
  EXPECT_LE(OpenFds(), before + 1);
  munmap(buffers, 2 * kRegions * kPage);
}

// Where the process has no descriptor left when its first region's pages would move (in a
// fork() child, whose region file is made anew), the region registers all the same and its
// pages stay where they are (the peer reaches them by process_vm). The next registration,
// with a descriptor to spare, moves. (The child asserts nothing while it has no descriptor:
// the sanitizers need one to check an access.)
TEST(RegionFileChildTest, WithNoDescriptorLeftARegionRegistersInPlace) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rpma_peer* peer = NewPeerInChild();
    char* area = NewPages(4, 2);
    char* again = NewPages(4, 3);
    if (peer == nullptr || area == nullptr || again == nullptr) _exit(10);
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(11);
    std::vector<int> taken;  // every descriptor below the lowered limit
    taken.reserve(64);
    struct rlimit lowered = limit;
    lowered.rlim_cur = static_cast<rlim_t>(OpenFds() + 8);
    if (setrlimit(RLIMIT_NOFILE, &lowered) != 0) _exit(12);
    for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) taken.push_back(fd);
    rpma_mr_local* mr = nullptr;
    const int reg = rpma_mr_reg(peer, area, 4 * kPage, kRemoteUsage, &mr);
    for (int fd : taken) close(fd);
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(13);
    if (reg != 0) _exit(14);
    if (Moved(area) || !AllBytes(area, 4 * kPage, 2)) _exit(15);
    rpma_mr_local* next = nullptr;
    if (rpma_mr_reg(peer, again, 4 * kPage, kRemoteUsage, &next) != 0 ||
        Moved(again) != PagesMoveHere())
      _exit(16);
    if (rpma_mr_dereg(&mr) != 0 || rpma_mr_dereg(&next) != 0 || rpma_peer_delete(&peer) != 0)
      _exit(17);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status));
}

// The peer writes a region, which is deregistered (its memory kept); a new region takes
// its slot of the file. The peer's next write reaches the new region, and the old memory
// keeps what it held.
TEST(RegionFileSlotTest, ASlotTakenAgainCarriesThePeersWritesToTheNewRegionOnly) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  Registrations registrations;
  constexpr size_t kPages = 4;
  constexpr size_t kSize = kPages * kPage;
  Buffer* source = registrations.NewBuffer(pair.peer, kSize, RPMA_MR_USAGE_WRITE_SRC, 0);
  ASSERT_NE(nullptr, source);
  std::vector<char*> regions;
  for (uint8_t round = 1; round <= 6; ++round) {
    char* region = NewPages(kPages, 0);
    ASSERT_NE(nullptr, region);
    regions.push_back(region);
    rpma_mr_local* mr = nullptr;
    ASSERT_NO_FATAL_FAILURE(registrations.Register(pair.peer, region, kSize, kRemoteUsage, &mr));
    EXPECT_EQ(PagesMoveHere(), Moved(region));
    memset(source->bytes.data(), round, kSize);
    ASSERT_NO_FATAL_FAILURE(WriteThenDeregister(pair, registrations, *source, &mr, kSize));
    // Every region so far holds its own round's bytes: none reached an older one.
    for (size_t i = 0; i < regions.size(); ++i)
      EXPECT_TRUE(AllBytes(regions[i], kSize, static_cast<uint8_t>(i + 1)))
          << "region " << i + 1 << " after round " << int{round};
  }
  for (char* region : regions) munmap(region, kSize);
  registrations.Release();
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// The application grows a registered mapping with mremap(2) (as realloc does for a large
// block): the grown part is new, zero-filled memory of its own, and writing it changes no
// other region, registered before or after, nor the application's memory once the region
// is deregistered. The pages keep their bytes after deregistration.
TEST_F(RegionFileTest, ARegistrationGrownWithMremapReachesNoOtherRegion) {
  constexpr size_t kPages = 2;
  constexpr size_t kGrownPages = 8;
  char* area = NewPages(kPages, 0x11);
  char* before = NewPages(kGrownPages, 0x22);
  ASSERT_TRUE(area != nullptr && before != nullptr);
  rpma_mr_local* mr = nullptr;
  rpma_mr_local* before_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, before, kGrownPages * kPage, kRemoteUsage, &before_mr));
  ASSERT_EQ(0, rpma_mr_reg(peer_, area, kPages * kPage, kRemoteUsage, &mr));
  char* grown =
      static_cast<char*>(mremap(area, kPages * kPage, kGrownPages * kPage, MREMAP_MAYMOVE));
  ASSERT_NE(MAP_FAILED, grown) << strerror(errno);
  EXPECT_TRUE(AllBytes(grown, kPages * kPage, 0x11));
  EXPECT_TRUE(AllBytes(grown + kPages * kPage, (kGrownPages - kPages) * kPage, 0))
      << MappingOf(grown + kPages * kPage);
  memset(grown + kPages * kPage, 0x33, (kGrownPages - kPages) * kPage);
  EXPECT_TRUE(AllBytes(before, kGrownPages * kPage, 0x22));
  // The region goes; one registered after it, of the grown length, takes a slot.
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  char* after = NewPages(kGrownPages, 0x44);
  ASSERT_NE(nullptr, after);
  rpma_mr_local* after_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, after, kGrownPages * kPage, kRemoteUsage, &after_mr));
  memset(grown, 0x55, kGrownPages * kPage);
  EXPECT_TRUE(AllBytes(after, kGrownPages * kPage, 0x44));
  EXPECT_TRUE(AllBytes(before, kGrownPages * kPage, 0x22));
  EXPECT_TRUE(AllBytes(grown, kGrownPages * kPage, 0x55));
  memset(after, 0x66, kGrownPages * kPage);
  EXPECT_TRUE(AllBytes(grown, kGrownPages * kPage, 0x55));
  ASSERT_EQ(0, rpma_mr_dereg(&after_mr));
  ASSERT_EQ(0, rpma_mr_dereg(&before_mr));
  EXPECT_TRUE(AllBytes(grown, kGrownPages * kPage, 0x55));
  EXPECT_TRUE(AllBytes(after, kGrownPages * kPage, 0x66));
  munmap(grown, kGrownPages * kPage);
  munmap(after, kGrownPages * kPage);
  munmap(before, kGrownPages * kPage);
}

// A fork() child that registers memory moves it into a file of its own: nothing it
// registers reaches the parent's regions, and the parent's file is not among its
// descriptors.
TEST_F(RegionFileTest, AForkChildHasAFileOfItsOwn) {
  char* parents = NewPages(2, 0x77);
  ASSERT_NE(nullptr, parents);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, parents, 2 * kPage, kRemoteUsage, &mr));
  const unsigned long long parents_file = InodeAt(parents);
  EXPECT_EQ(PagesMoveHere(), FdOfInode(parents_file) >= 0 && parents_file != 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The region stays registered in the child's copy of the peer; the pages are private.
    if (Moved(parents) || (PagesMoveHere() && FdOfInode(parents_file) >= 0)) _exit(10);
    rpma_peer* own = NewPeerInChild();
    if (own == nullptr) _exit(11);
    char* childs = NewPages(2, 0x88);
    rpma_mr_local* child_mr = nullptr;
    if (childs == nullptr || rpma_mr_reg(own, childs, 2 * kPage, kRemoteUsage, &child_mr) != 0)
      _exit(12);
    if (Moved(childs) != PagesMoveHere()) _exit(13);
    if (PagesMoveHere() && InodeAt(childs) == parents_file) _exit(14);
    memset(childs, 0x99, 2 * kPage);
    memset(parents, 0xAA, 2 * kPage);
    if (rpma_mr_dereg(&child_mr) != 0 || !AllBytes(childs, 2 * kPage, 0x99)) _exit(15);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status));
  EXPECT_TRUE(AllBytes(parents, 2 * kPage, 0x77));
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  munmap(parents, 2 * kPage);
}

}  // namespace
