// region_file_mappings_test.cc -- mappings of a region file's slot that outlive the
// region (docs/transports.md): a child forked without fork handlers, memory the application
// grew or moved with mremap, a peer's mapping in this process, a stalled peer's copy. None
// of them reaches a region registered later (no slot is ever taken twice), and the slot's
// memory is given back when the region is deregistered. (These were a review's failing
// tests of a first design that reused slots.)
//
// Over TCP and in process nothing moves and the same tests hold.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/moved_pages.h"
#include "tests/common/test_support.h"

namespace {

constexpr size_t kPage = 4096;
constexpr int kRemoteUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC;

// The bytes the file behind `fd` holds in memory (its allocated blocks).
long long AllocatedBytes(int fd) {
  struct stat status;
  if (fstat(fd, &status) != 0) return -1;
  return static_cast<long long>(status.st_blocks) * 512;
}

// A local peer (peer_) for each test.
class RegionFileMappingsTest : public PeerFixture {};

// docs/differences.md: "A child made without fork handlers (_Fork(), a raw clone) shares such
// pages with its parent until the region is deregistered". Once the parent deregisters the
// region and registers another, the child's mapping at the old region's address is not the
// new region's memory: the child neither reads the new region's bytes nor writes into it.
TEST_F(RegionFileMappingsTest, AChildWithoutForkHandlersDoesNotReachTheParentsNextRegion) {
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
// the region, and then frees the memory (munmap, as free() does for a large block): the
// region file holds none of it afterwards, round after round.
TEST_F(RegionFileMappingsTest, MemoryGrownWithMremapIsGivenBackOnceUnmapped) {
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
  // What the file holds besides this region (earlier tests' regions and children).
  const long long others = AllocatedBytes(fd) - static_cast<long long>(kPages * kPage);
  char* grown =
      static_cast<char*>(mremap(area, kPages * kPage, kGrownPages * kPage, MREMAP_MAYMOVE));
  ASSERT_NE(MAP_FAILED, grown) << strerror(errno);
  memset(grown, 0x22, kGrownPages * kPage);  // the application uses all of it
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  ASSERT_EQ(0, munmap(grown, kGrownPages * kPage));
  // No mapping of the slot is left anywhere: nothing it held is reachable any more.
  EXPECT_EQ(others, AllocatedBytes(fd))
      << "the region file holds " << AllocatedBytes(fd) - others
      << " bytes more after the region was deregistered and the grown memory unmapped";
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
// this process (both ends here), the initiator keeps its mapping of the region's part of the
// file: the region file holds none of the region's pages once it is deregistered all the
// same.
TEST(RegionFileMappingsPairTest, APartlyUnmappedRegionIsGivenBackAfterAPeerInThisProcessWroteIt) {
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

// A peer process is stopped in the middle of a direct write (here: its source page faults
// into a userfaultfd that nobody serves for a while; a SIGSTOP, a debugger or an overloaded
// host do the same). The target deregisters the region: DirectTarget::WaitIdle gives up
// after 1 s ("a peer that holds one longer is stuck or lying, and the close goes on") and
// the pages move back. The target registers another region. When the peer goes on, the rest
// of its copy lands in the old region's slot, never in the new region (memory the peer was
// never granted), and the write does not complete successfully.
//
// Child exit codes: 0 the write completed; 20-29 setup; 30 userfaultfd not allowed here.
TEST(RegionFileMappingsProcessTest, AStalledPeersLateWriteDoesNotReachTheNextRegion) {
#if defined(__SANITIZE_THREAD__)
  // The peer is a fork() child of this multithreaded process that starts threads of its
  // own, which ThreadSanitizer does not support (the plain and ASan+UBSan runs check it).
  GTEST_SKIP() << "not under ThreadSanitizer";
#endif
  if (!PagesMoveHere()) GTEST_SKIP() << "nothing moves into a region file here";
  constexpr size_t kPages = 16;
  constexpr size_t kSize = kPages * kPage;
  const std::string port = FreeTcpPort();
  ASSERT_FALSE(port.empty());
  int to_child[2], to_parent[2];
  ASSERT_EQ(0, pipe(to_child));
  ASSERT_EQ(0, pipe(to_parent));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    auto tell = [&](char what) { (void)!write(to_parent[1], &what, 1); };
    auto fail = [&](int code) {
      tell('F');
      _exit(code);
    };
    size_t desc_size = 0;
    if (read(to_child[0], &desc_size, sizeof(desc_size)) != sizeof(desc_size)) fail(20);
    std::vector<char> desc(desc_size);
    if (read(to_child[0], desc.data(), desc_size) != static_cast<ssize_t>(desc_size)) fail(21);
    ibv_context* device = nullptr;
    rpma_peer* peer = nullptr;
    if (rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device) != 0 ||
        rpma_peer_new(device, &peer) != 0)
      fail(22);
    rpma_conn_req* req = nullptr;
    rpma_conn* conn = nullptr;
    rpma_conn_event event;
    if (rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req) != 0 ||
        rpma_conn_req_connect(&req, nullptr, &conn) != 0 ||
        rpma_conn_next_event(conn, &event) != 0 || event != RPMA_CONN_ESTABLISHED)
      fail(23);
    rpma_mr_remote* remote = nullptr;
    if (rpma_mr_remote_from_descriptor(desc.data(), desc_size, &remote) != 0) fail(24);
    char* warm = NewPages(kPages, 0xB0);
    char* source = static_cast<char*>(
        mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    rpma_mr_local* warm_mr = nullptr;
    rpma_mr_local* source_mr = nullptr;
    if (warm == nullptr || source == MAP_FAILED ||
        rpma_mr_reg(peer, warm, kSize, RPMA_MR_USAGE_WRITE_SRC, &warm_mr) != 0 ||
        rpma_mr_reg(peer, source, kSize, RPMA_MR_USAGE_WRITE_SRC, &source_mr) != 0)
      fail(25);
    rpma_cq* cq = nullptr;
    if (rpma_conn_get_cq(conn, &cq) != 0) fail(26);
    auto complete = [&]() {
      for (int i = 0; i < 2000000; ++i) {
        ibv_wc wc;
        int got = 0;
        const int ret = rpma_cq_get_wc(cq, 1, &wc, &got);
        if (ret == 0 && got == 1) return wc.status == IBV_WC_SUCCESS;
        if (ret != RPMA_E_NO_COMPLETION) return false;
        usleep(10);
      }
      return false;
    };
    // A write as usual first: the peer maps the region's part of the target's region file.
    if (rpma_write(conn, remote, 0, warm_mr, 0, kSize, RPMA_F_COMPLETION_ALWAYS, nullptr) != 0 ||
        !complete())
      fail(27);
    // The source pages fault into a userfaultfd until the parent says go.
    const int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
    if (uffd < 0) fail(30);
    uffdio_api api = {};
    api.api = UFFD_API;
    uffdio_register reg = {};
    reg.range.start = reinterpret_cast<uintptr_t>(source);
    reg.range.len = kSize;
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(uffd, UFFDIO_API, &api) != 0 || ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) fail(30);
    madvise(source, kSize, MADV_DONTNEED);  // missing, whatever registration touched
    std::thread server([&]() {
      pollfd waiting = {uffd, POLLIN, 0};
      if (poll(&waiting, 1, kSafetyTimeoutMs) != 1) _exit(28);
      tell('S');  // the peer is inside its access to the region now
      char go = 0;
      if (read(to_child[0], &go, 1) != 1) _exit(29);
      char* late = NewPages(kPages, 0xC1);
      uffdio_copy copy = {};
      copy.dst = reinterpret_cast<uintptr_t>(source);
      copy.src = reinterpret_cast<uintptr_t>(late);
      copy.len = kSize;
      ioctl(uffd, UFFDIO_COPY, &copy);
    });
    const bool wrote =
        rpma_write(conn, remote, 0, source_mr, 0, kSize, RPMA_F_COMPLETION_ALWAYS, nullptr) == 0 &&
        complete();
    server.join();
    tell(wrote ? 'W' : 'X');
    _exit(0);
  }
  close(to_child[0]);
  close(to_parent[1]);
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  rpma_ep* ep = nullptr;
  ASSERT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), &ep));
  char* old_region = NewPages(kPages, 0x11);
  ASSERT_NE(nullptr, old_region);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, old_region, kSize, kRemoteUsage, &mr));
  ASSERT_TRUE(Moved(old_region));
  size_t desc_size = 0;
  ASSERT_EQ(0, rpma_mr_get_descriptor_size(mr, &desc_size));
  std::vector<char> desc(desc_size);
  ASSERT_EQ(0, rpma_mr_get_descriptor(mr, desc.data()));
  ASSERT_EQ(static_cast<ssize_t>(sizeof(desc_size)),
            write(to_child[1], &desc_size, sizeof(desc_size)));
  ASSERT_EQ(static_cast<ssize_t>(desc_size), write(to_child[1], desc.data(), desc_size));
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(ep, nullptr, &req));
  rpma_conn* server = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(server, RPMA_CONN_ESTABLISHED));
  char said = 0;
  ASSERT_EQ(1, read(to_parent[0], &said, 1));
  if (said != 'S') {
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 30)
      GTEST_SKIP() << "userfaultfd (user mode only) is not allowed here";
    FAIL() << "child: " << said << ", status " << status;
  }
  EXPECT_TRUE(AllBytes(old_region, kSize, 0xB0)) << "the peer's first write";
  // The peer is stopped inside its write to the region: the region goes anyway (after 1 s).
  const auto dereg_start = std::chrono::steady_clock::now();
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  const auto dereg_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - dereg_start)
                            .count();
  char* new_region = NewPages(kPages, 0x44);
  ASSERT_NE(nullptr, new_region);
  rpma_mr_local* new_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, new_region, kSize, kRemoteUsage, &new_mr));
  EXPECT_TRUE(Moved(new_region));
  ASSERT_EQ(1, write(to_child[1], "g", 1));  // the peer goes on
  ASSERT_EQ(1, read(to_parent[0], &said, 1));
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(AllBytes(new_region, kSize, 0x44))
      << "the stalled peer's late write (0xC1) landed in a region registered after the one it "
         "was granted was deregistered (first byte now 0x"
      << std::hex << static_cast<unsigned>(static_cast<uint8_t>(new_region[0])) << std::dec
      << "; the deregistration waited " << dereg_ms << " ms; the peer's write: " << said << ")";
  EXPECT_TRUE(AllBytes(old_region, kSize, 0xB0));
  // The target went on without the stalled access: the write's bytes went nowhere, and its
  // completion says so (the region is gone: an error, not IBV_WC_SUCCESS).
  EXPECT_EQ('X', said) << "the stalled peer's write completed successfully";
  ASSERT_EQ(0, rpma_mr_dereg(&new_mr));
  rpma_conn_disconnect(server);
  rpma_conn_delete(&server);
  rpma_ep_shutdown(&ep);
  rpma_peer_delete(&peer);
  for (int fd : {to_child[1], to_parent[0]}) close(fd);
  munmap(old_region, kSize);
  munmap(new_region, kSize);
}

// Threads register and deregister regions of their own at once (the region file made by the
// first that needs it, slots taken under the table's lock): every region keeps its bytes, no
// two registered regions share a slot of the file (each one's first byte written through the
// file reaches only its own memory), and the process holds one descriptor for all.
TEST_F(RegionFileMappingsTest, ThreadsRegisteringAtOnceGetSlotsOfTheirOwn) {
  constexpr int kThreads = 6;
  constexpr int kRounds = 60;
  constexpr size_t kPages = 3;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t]() {
      std::vector<char*> areas;
      std::vector<rpma_mr_local*> mrs;
      std::vector<uint8_t> fills;
      for (int round = 0; round < kRounds; ++round) {
        const uint8_t fill = static_cast<uint8_t>(t * 16 + round % 16 + 1);
        char* area = NewPages(kPages, fill);
        rpma_mr_local* mr = nullptr;
        if (area == nullptr || rpma_mr_reg(peer_, area, kPages * kPage, kRemoteUsage, &mr) != 0) {
          ++failures[t];
          continue;
        }
        if (Moved(area) != PagesMoveHere() || !AllBytes(area, kPages * kPage, fill)) ++failures[t];
        areas.push_back(area);
        mrs.push_back(mr);
        fills.push_back(fill);
        // A slot given to two registered regions would have the later move's bytes in both.
        for (size_t i = 0; i < areas.size(); ++i)
          if (!AllBytes(areas[i], kPages * kPage, fills[i])) ++failures[t];
        // Keep a few registered, let the rest go in another order than they came.
        if (mrs.size() > 3) {
          const size_t i = round % mrs.size();
          if (rpma_mr_dereg(&mrs[i]) != 0) ++failures[t];
          if (!AllBytes(areas[i], kPages * kPage, fills[i])) ++failures[t];
          munmap(areas[i], kPages * kPage);
          fills.erase(fills.begin() + i);
          mrs.erase(mrs.begin() + i);
          areas.erase(areas.begin() + i);
        }
      }
      for (size_t i = 0; i < mrs.size(); ++i) {
        if (rpma_mr_dereg(&mrs[i]) != 0 || !AllBytes(areas[i], kPages * kPage, fills[i]))
          ++failures[t];
        munmap(areas[i], kPages * kPage);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(0, failures[t]) << "thread " << t;
}

}  // namespace
