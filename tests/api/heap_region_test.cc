// heap_region_test.cc -- registering heap memory leaves the application's view of it as it
// was: contents, address, protection, neighbouring heap objects (freed, reused, calloc'd),
// unmapped and advised-away neighbours, stores by other threads during registration,
// deregistration and reuse, and what a fork() child sees.
//
// Over shared memory (RPMA_SIM_TRANSPORT=shm, and auto) a registered region's pages move
// into a shared mapping (docs/transports.md); these tests check that they did, and that
// nothing the application can observe changed. Over TCP and in process they do not move and
// the same tests hold.
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/moved_pages.h"
#include "tests/common/test_support.h"

namespace {

constexpr size_t kPage = 4096;
constexpr int kRemoteUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC;

bool Writable(const void* address) {
  const std::string line = MappingOf(address);
  const size_t perms = line.find(' ') + 1;
  return line.compare(perms, 2, "rw") == 0;
}

void Fill(void* address, size_t length, uint8_t seed) {
  uint8_t* bytes = static_cast<uint8_t*>(address);
  for (size_t i = 0; i < length; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
}

bool Holds(const void* address, size_t length, uint8_t seed) {
  const uint8_t* bytes = static_cast<const uint8_t*>(address);
  for (size_t i = 0; i < length; ++i)
    if (bytes[i] != static_cast<uint8_t>(seed + i * 7)) return false;
  return true;
}

// A local peer (peer_) for each test.
class HeapRegionTest : public PeerFixture {};

TEST_F(HeapRegionTest, ContentsAddressAndProtectionStay) {
  char* before = static_cast<char*>(malloc(100));
  char* region = static_cast<char*>(malloc(3 * kPage + 100));
  char* after = static_cast<char*>(malloc(100));
  ASSERT_TRUE(before && region && after);
  Fill(before, 100, 1);
  Fill(region, 3 * kPage + 100, 2);
  Fill(after, 100, 3);

  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, region, 3 * kPage + 100, kRemoteUsage, &mr));
  void* ptr = nullptr;
  ASSERT_EQ(0, rpma_mr_get_ptr(mr, &ptr));
  EXPECT_EQ(region, ptr);
  EXPECT_EQ(PagesMoveHere(), Moved(region + kPage)) << MappingOf(region + kPage);
  EXPECT_TRUE(Writable(region)) << MappingOf(region);
  EXPECT_TRUE(Holds(before, 100, 1));
  EXPECT_TRUE(Holds(region, 3 * kPage + 100, 2));
  EXPECT_TRUE(Holds(after, 100, 3));

  // The application keeps using the region and its neighbours as before.
  Fill(region, 3 * kPage + 100, 4);
  Fill(before, 100, 5);
  free(after);
  char* again = static_cast<char*>(malloc(100));
  ASSERT_NE(nullptr, again);
  Fill(again, 100, 6);

  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_FALSE(Moved(region + kPage)) << MappingOf(region + kPage);
  EXPECT_TRUE(Writable(region + kPage));
  EXPECT_TRUE(Holds(region, 3 * kPage + 100, 4));
  EXPECT_TRUE(Holds(before, 100, 5));
  EXPECT_TRUE(Holds(again, 100, 6));
  free(again);
  free(region);
  free(before);
}

TEST_F(HeapRegionTest, FreedNeighboursAreReusedAndCallocGivesZeros) {
  std::vector<char*> neighbours;
  for (int i = 0; i < 64; ++i) neighbours.push_back(static_cast<char*>(malloc(200)));
  char* region = static_cast<char*>(malloc(2 * kPage));
  for (int i = 0; i < 64; ++i) neighbours.push_back(static_cast<char*>(malloc(200)));
  for (char* neighbour : neighbours) memset(neighbour, 0xAB, 200);
  Fill(region, 2 * kPage, 7);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, region, 2 * kPage, kRemoteUsage, &mr));

  for (char* neighbour : neighbours) free(neighbour);
  malloc_trim(0);
  std::vector<char*> zeroed;
  for (size_t size : {16, 200, 1000, 5000, 300000}) {
    char* fresh = static_cast<char*>(calloc(1, size));
    ASSERT_NE(nullptr, fresh);
    EXPECT_TRUE(AllBytes(fresh, size, 0)) << size << " bytes";
    zeroed.push_back(fresh);
  }
  EXPECT_TRUE(Holds(region, 2 * kPage, 7));

  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  free(region);
  malloc_trim(0);
  char* reused = static_cast<char*>(calloc(1, 2 * kPage));
  ASSERT_NE(nullptr, reused);
  EXPECT_TRUE(AllBytes(reused, 2 * kPage, 0));
  free(reused);
  for (char* fresh : zeroed) free(fresh);
}

TEST_F(HeapRegionTest, UnmappedAndAdvisedNeighboursAndTheRegionAfterDeregistration) {
  // Four anonymous pages; the middle two are the region.
  char* area = static_cast<char*>(
      mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(MAP_FAILED, area);
  char* region = area + kPage;
  Fill(area, 4 * kPage, 8);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, region, 2 * kPage, kRemoteUsage, &mr));
  EXPECT_EQ(PagesMoveHere(), Moved(region));
  EXPECT_FALSE(Moved(area));  // a neighbour page is not the region's: it stays

  // madvise of a neighbour zero-fills it as always; munmap of the other leaves the region.
  ASSERT_EQ(0, madvise(area, kPage, MADV_DONTNEED));
  EXPECT_TRUE(AllBytes(area, kPage, 0));
  ASSERT_EQ(0, munmap(area + 3 * kPage, kPage));
  EXPECT_TRUE(Holds(region, 2 * kPage, static_cast<uint8_t>(8 + kPage * 7)));

  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_FALSE(Moved(region));
  // Private anonymous memory again: advised away, it reads as zeros.
  EXPECT_TRUE(Holds(region, 2 * kPage, static_cast<uint8_t>(8 + kPage * 7)));
  ASSERT_EQ(0, madvise(region, 2 * kPage, MADV_DONTNEED));
  EXPECT_TRUE(AllBytes(region, 2 * kPage, 0));

  // Registered again after reuse, then unmapped by the application before deregistration.
  Fill(region, 2 * kPage, 9);
  ASSERT_EQ(0, rpma_mr_reg(peer_, region, 2 * kPage, kRemoteUsage, &mr));
  EXPECT_TRUE(Holds(region, 2 * kPage, 9));
  ASSERT_EQ(0, munmap(area, 3 * kPage));
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_EQ("", MappingOf(region));  // deregistration maps nothing back
}

TEST_F(HeapRegionTest, OnlyWholePagesMoveAndRegionsShareThem) {
  char* buffer = static_cast<char*>(aligned_alloc(kPage, 3 * kPage));
  ASSERT_NE(nullptr, buffer);
  Fill(buffer, 3 * kPage, 10);
  rpma_mr_local* small = nullptr;
  rpma_mr_local* first = nullptr;
  rpma_mr_local* inside = nullptr;
  rpma_mr_local* across = nullptr;
  // Less than a page: its page also holds other bytes, and stays.
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer + 100, 1000, kRemoteUsage, &small));
  EXPECT_FALSE(Moved(buffer));
  ASSERT_EQ(0, rpma_mr_dereg(&small));
  // Two pages and a bit: the whole pages move, the partial one does not.
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer, 2 * kPage + 100, kRemoteUsage, &first));
  EXPECT_EQ(PagesMoveHere(), Moved(buffer));
  EXPECT_EQ(PagesMoveHere(), Moved(buffer + kPage));
  EXPECT_FALSE(Moved(buffer + 2 * kPage));
  // A region on moved pages shares them; one over moved pages and others does not move.
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer + kPage, kPage, kRemoteUsage, &inside));
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer + kPage, 2 * kPage, kRemoteUsage, &across));
  EXPECT_FALSE(Moved(buffer + 2 * kPage));
  EXPECT_TRUE(Holds(buffer, 3 * kPage, 10));

  // The pages stay moved while any region on them is registered, whichever goes first.
  ASSERT_EQ(0, rpma_mr_dereg(&first));
  EXPECT_EQ(PagesMoveHere(), Moved(buffer));
  ASSERT_EQ(0, rpma_mr_dereg(&inside));
  EXPECT_EQ(PagesMoveHere(), Moved(buffer + kPage)) << "`across` is still on the second page";
  ASSERT_EQ(0, rpma_mr_dereg(&across));
  EXPECT_FALSE(Moved(buffer));
  EXPECT_FALSE(Moved(buffer + kPage));
  EXPECT_TRUE(Holds(buffer, 3 * kPage, 10));
  free(buffer);
}

// A region no peer reaches moves nothing, but keeps pages moved for another region shared
// while it is registered: moving them back would make a copy into it by process_vm (a
// read's bytes) fail for a moment.
TEST_F(HeapRegionTest, ALocalRegionKeepsThePagesItLiesOnShared) {
  char* buffer = static_cast<char*>(aligned_alloc(kPage, 2 * kPage));
  ASSERT_NE(nullptr, buffer);
  Fill(buffer, 2 * kPage, 11);
  rpma_mr_local* local_only = nullptr;
  rpma_mr_local* remote = nullptr;
  // Alone, a local region moves nothing.
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer, 2 * kPage, RPMA_MR_USAGE_READ_DST, &local_only));
  EXPECT_FALSE(Moved(buffer));
  ASSERT_EQ(0, rpma_mr_dereg(&local_only));
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer, 2 * kPage, kRemoteUsage, &remote));
  ASSERT_EQ(0, rpma_mr_reg(peer_, buffer, 2 * kPage, RPMA_MR_USAGE_READ_DST, &local_only));
  ASSERT_EQ(0, rpma_mr_dereg(&remote));
  EXPECT_EQ(PagesMoveHere(), Moved(buffer)) << "the local region is still on them";
  EXPECT_EQ(PagesMoveHere(), Moved(buffer + kPage));
  ASSERT_EQ(0, rpma_mr_dereg(&local_only));
  EXPECT_FALSE(Moved(buffer));
  EXPECT_TRUE(Holds(buffer, 2 * kPage, 11));
  free(buffer);
}

TEST_F(HeapRegionTest, StoresOfAnotherThreadDuringRegistrationAreKept) {
  // Another thread keeps incrementing a word on each page of the region: an increment lost
  // to a move (made on the old pages after they were copied) leaves a counter behind the
  // thread's own count.
  char* page = static_cast<char*>(aligned_alloc(kPage, 2 * kPage));
  ASSERT_NE(nullptr, page);
  auto* neighbour = reinterpret_cast<std::atomic<uint64_t>*>(page + 64);
  auto* in_region = reinterpret_cast<std::atomic<uint64_t>*>(page + kPage + 64);
  neighbour->store(0);
  in_region->store(0);
  std::atomic<bool> stop{false};
  uint64_t stored = 0;
  std::thread writer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      ++stored;
      neighbour->fetch_add(1, std::memory_order_relaxed);
      in_region->fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (int i = 0; i < 200; ++i) {
    rpma_mr_local* mr = nullptr;
    ASSERT_EQ(0, rpma_mr_reg(peer_, page, 2 * kPage, kRemoteUsage, &mr));
    if (i == 0) EXPECT_EQ(PagesMoveHere(), Moved(page));
    ASSERT_EQ(0, rpma_mr_dereg(&mr));
  }
  stop.store(true);
  writer.join();
  EXPECT_EQ(stored, neighbour->load());
  EXPECT_EQ(stored, in_region->load());
  free(page);
}

// More moves than the simulator keeps slots for (1 024) follow each other as fast as they
// come: every registration still moves its pages, and no deregistration waits for a slot.
TEST_F(HeapRegionTest, EveryRegistrationOfABurstMoves) {
  char* page = static_cast<char*>(aligned_alloc(kPage, kPage));
  ASSERT_NE(nullptr, page);
  Fill(page, kPage, 14);
  int moved = 0;
  for (int i = 0; i < 600; ++i) {  // 1 200 moves, both ways
    rpma_mr_local* mr = nullptr;
    ASSERT_EQ(0, rpma_mr_reg(peer_, page, kPage, kRemoteUsage, &mr));
    moved += Moved(page) ? 1 : 0;
    ASSERT_EQ(0, rpma_mr_dereg(&mr));
  }
  EXPECT_EQ(PagesMoveHere() ? 600 : 0, moved);
  EXPECT_TRUE(Holds(page, kPage, 14));
  free(page);
}

// The parent's client writes into its server's heap region before and after a fork(); the
// child sees what was there at the fork, and neither side's stores reach the other.
// Whether the mapping that holds `address` is locked in memory (mlock, mlockall: "lo" among
// its VmFlags in /proc/self/smaps).
bool Locked(const void* address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  FILE* smaps = fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return false;
  char line[4096];
  bool inside = false;
  bool locked = false;
  while (fgets(line, sizeof(line), smaps) != nullptr) {
    unsigned long long start, end;
    if (sscanf(line, "%llx-%llx ", &start, &end) == 2) {
      inside = start <= at && at < end;
    } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
      locked = strstr(line, " lo") != nullptr;
      break;
    }
  }
  fclose(smaps);
  return locked;
}

// An application that locks its memory (mlock, or mlockall as real-time and RDMA programs
// do) keeps it locked: while registered (a NIC pins it too) and after deregistration, not
// left subject to swapping for the rest of the program.
TEST_F(HeapRegionTest, LockedPagesStayLocked) {
  char* area = static_cast<char*>(
      mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(MAP_FAILED, area);
  Fill(area, 4 * kPage, 23);
  ASSERT_EQ(0, mlock(area, 4 * kPage));
  // The sanitizers' mlock does nothing (it would lock their shadow memory too).
  if (!Locked(area + kPage)) {
    munmap(area, 4 * kPage);
    GTEST_SKIP() << "mlock locks nothing here";
  }
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, area + kPage, 2 * kPage, kRemoteUsage, &mr));
  EXPECT_EQ(PagesMoveHere(), Moved(area + kPage));
  EXPECT_TRUE(Locked(area + kPage)) << MappingOf(area + kPage);
  ASSERT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_FALSE(Moved(area + kPage));
  for (size_t page = 0; page < 4; ++page)
    EXPECT_TRUE(Locked(area + page * kPage)) << MappingOf(area + page * kPage);
  EXPECT_TRUE(Holds(area, 4 * kPage, 23));
  munlock(area, 4 * kPage);
  munmap(area, 4 * kPage);
}

// The kilobytes of memory the mappings of the region file hold in this process (the
// Rss of each "rpma-sim-region" mapping in /proc/self/smaps).
long MovedRegionsResidentKb() {
  FILE* smaps = fopen("/proc/self/smaps", "re");
  if (smaps == nullptr) return -1;
  char line[4096];
  bool in_region = false;
  long kb = 0;
  while (fgets(line, sizeof(line), smaps) != nullptr) {
    unsigned long long start, end;
    long rss;
    if (sscanf(line, "%llx-%llx ", &start, &end) == 2)
      in_region = strstr(line, "rpma-sim-region") != nullptr;
    else if (in_region && sscanf(line, "Rss: %ld kB", &rss) == 1)
      kb += rss;
  }
  fclose(smaps);
  return kb;
}

// A region registered, written by the peer and deregistered, twenty times (a new buffer
// each time): once deregistered, its pages are the application's private memory again and
// their part of the region file holds none. Over shared memory the peer (this process) keeps its
// mapping of each old region's part until another region takes the same slot of the table; those
// mappings must not keep a copy of each old region in memory.
TEST(HeapRegionReuseTest, ThePeersMappingsOfDeregisteredRegionsHoldNoMemory) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  Registrations registrations;
  constexpr size_t kSize = 64 * kPage;
  Buffer* source = registrations.NewBuffer(pair.peer, kSize, RPMA_MR_USAGE_WRITE_SRC, 0x33);
  ASSERT_NE(nullptr, source);
  for (int round = 0; round < 20; ++round) {
    char* region = static_cast<char*>(aligned_alloc(kPage, kSize));
    ASSERT_NE(nullptr, region);
    memset(region, 0, kSize);
    rpma_mr_local* mr = nullptr;
    ASSERT_NO_FATAL_FAILURE(registrations.Register(pair.peer, region, kSize, kRemoteUsage, &mr));
    ASSERT_NO_FATAL_FAILURE(WriteThenDeregister(pair, registrations, *source, &mr, kSize));
    EXPECT_FALSE(Moved(region + kPage));
    EXPECT_EQ(nullptr, memchr(region, 0, kSize))
        << "the peer's bytes (0x33) stay in the region after deregistration";
    free(region);
  }
  EXPECT_EQ(0, MovedRegionsResidentKb());
  registrations.Release();
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(HeapRegionForkTest, TheChildHasItsOwnCopyAndThePeerStillReachesTheParent) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  Registrations registrations;
  char* region = static_cast<char*>(aligned_alloc(kPage, 2 * kPage));
  ASSERT_NE(nullptr, region);
  memset(region, 0, 2 * kPage);
  rpma_mr_local* region_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      registrations.Register(pair.peer, region, 2 * kPage, kRemoteUsage, &region_mr));
  EXPECT_EQ(PagesMoveHere(), Moved(region + kPage));
  rpma_mr_remote* remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(registrations.RemoteOf(region_mr, &remote));
  Buffer* source = registrations.NewBuffer(pair.peer, 2 * kPage, RPMA_MR_USAGE_WRITE_SRC, 0);
  ASSERT_NE(nullptr, source);
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(pair.client, &cq));
  auto write_all = [&](uint8_t seed) {
    Fill(source->bytes.data(), 2 * kPage, seed);
    ASSERT_EQ(0, rpma_write(pair.client, remote, 0, source->mr, 0, 2 * kPage,
                            RPMA_F_COMPLETION_ALWAYS, nullptr));
    ibv_wc wc;
    ASSERT_NO_FATAL_FAILURE(WaitForCompletion(cq, &wc));
    ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
  };
  ASSERT_NO_FATAL_FAILURE(write_all(11));
  ASSERT_TRUE(Holds(region, 2 * kPage, 11));

  int to_parent[2], to_child[2];
  ASSERT_EQ(0, pipe(to_parent));
  ASSERT_EQ(0, pipe(to_child));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // only plain memory and pipes here
    int failed = Holds(region, 2 * kPage, 11) ? 0 : 1;
    Fill(region, 2 * kPage, 12);
    char go = 0;
    if (write(to_parent[1], "r", 1) != 1 || read(to_child[0], &go, 1) != 1) failed |= 4;
    if (!Holds(region, 2 * kPage, 12)) failed |= 2;
    _exit(failed);
  }
  char ready = 0;
  ASSERT_EQ(1, read(to_parent[0], &ready, 1));
  EXPECT_TRUE(Holds(region, 2 * kPage, 11));  // the child's stores are its own
  ASSERT_NO_FATAL_FAILURE(write_all(13));     // the peer still reaches the parent's pages
  EXPECT_TRUE(Holds(region, 2 * kPage, 13));
  EXPECT_EQ(PagesMoveHere(), Moved(region + kPage));
  ASSERT_EQ(1, write(to_child[1], "g", 1));
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status))
      << "1: the child did not see the region as it was at the fork; 2: the parent's peer "
         "wrote into the child's copy; 4: the pipe failed";
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(fd);
  registrations.Release();
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
  free(region);
}

// In a death test's child: two pages of heap memory holding `fill`, registered with a new
// local peer (the child exits 31 or 32 if that fails).
char* RegisteredPagesInChild(uint8_t fill) {
  rpma_peer* peer = nullptr;
  NewLocalPeer(&peer);
  char* region = static_cast<char*>(aligned_alloc(kPage, 2 * kPage));
  if (peer == nullptr || region == nullptr) _exit(31);
  Fill(region, 2 * kPage, fill);
  rpma_mr_local* mr = nullptr;
  if (rpma_mr_reg(peer, region, 2 * kPage, kRemoteUsage, &mr) != 0) _exit(32);
  return region;
}

std::atomic<int> g_own_faults{0};
char* g_own_protected = nullptr;

// The application's own SIGSEGV handler (a write barrier, dirty-page tracking): it opens the
// page the store faulted on and lets the store go on.
void OwnWriteFault(int, siginfo_t* info, void*) {
  char* page = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(info->si_addr) & ~(kPage - 1));
  if (g_own_protected == nullptr || page < g_own_protected || page >= g_own_protected + 2 * kPage)
    _exit(20);  // not the application's fault: it would crash
  mprotect(page, kPage, PROT_READ | PROT_WRITE);
  g_own_faults.fetch_add(1);
}

// An application that tracks stores with mprotect and a SIGSEGV handler of its own,
// installed before its first registration (so the simulator's handler passes it what is
// not its own): a store to a registered page it protected reaches its handler at once, not
// after the simulator's second of retrying faults in a range it just moved.
TEST(HeapRegionProtectionTest, TheApplicationsOwnWriteFaultsReachItsHandlerAtOnce) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct sigaction own;
        sigemptyset(&own.sa_mask);
        own.sa_flags = SA_SIGINFO;
        own.sa_sigaction = OwnWriteFault;
        if (sigaction(SIGSEGV, &own, nullptr) != 0) _exit(30);
        char* region = RegisteredPagesInChild(22);
        g_own_protected = region;
        mprotect(region, 2 * kPage, PROT_READ);  // the application's tracking starts
        const auto start = std::chrono::steady_clock::now();
        region[0] = 1;
        region[kPage] = 2;
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
        fprintf(stderr, "two stores took %lld ms, %d faults reached the application\n",
                static_cast<long long>(took), g_own_faults.load());
        // The old retries held the stores for the rest of the second after the move.
        _exit(took < 500 && g_own_faults.load() == 2 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

jmp_buf g_probe;
void ProbeFault(int) { longjmp(g_probe, 1); }

// Whether a load from `address` faults, found as a program that probes memory does: its
// SIGSEGV handler (SA_NODEFER, so that it may fault again after jumping out of it) jumps
// back here.
bool LoadFaults(const volatile char* address) {
  if (setjmp(g_probe) != 0) return true;
  (void)*address;
  return false;
}

// The simulator's SIGSEGV handler (installed at the first registration) passes a fault that
// is not its own to the handler installed before it with the mask that handler's flags ask
// for (SA_NODEFER here): a handler that jumps out (longjmp) must not leave SIGSEGV blocked,
// or the next fault kills the process instead of reaching it.
TEST(HeapRegionProtectionTest, TheApplicationsOwnSigsegvHandlerKeepsItsFlags) {
#if defined(__SANITIZE_THREAD__)
  // ThreadSanitizer intercepts sigaction and runs handlers itself: a longjmp out of the
  // application's handler, called from the simulator's, kills the process under it (not
  // investigated further; the plain and ASan+UBSan runs check the chaining).
  GTEST_SKIP() << "not under ThreadSanitizer";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        struct sigaction probe;
        sigemptyset(&probe.sa_mask);
        probe.sa_flags = SA_NODEFER;
        probe.sa_handler = ProbeFault;
        if (sigaction(SIGSEGV, &probe, nullptr) != 0) _exit(40);
        char* guard =
            static_cast<char*>(mmap(nullptr, kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (guard == MAP_FAILED) _exit(41);
        if (!LoadFaults(guard)) _exit(42);  // as before any registration
        (void)RegisteredPagesInChild(0);
        int faults = 0;
        for (int i = 0; i < 3; ++i) faults += LoadFaults(guard) ? 1 : 0;
        fprintf(stderr, "%d of 3 probes came back\n", faults);
        _exit(faults == 3 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
