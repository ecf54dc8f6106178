// region_pages_test.cc -- what a peer's access does to a registered region whose pages the
// application changed while it was registered: made read-only or inaccessible (a device
// reaches pinned pages whatever their protection, and so does the simulator), or unmapped
// (the simulator cannot reach pages that are gone: an error completion, never a crash); and
// what a write or send does whose own buffer the requester unmapped under it.
// The same on every transport: in process, over TCP and over shared memory, where the
// region's whole pages move into a shared mapping and its partial ones do not.
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kOffset = 100;        // the region starts this far into the area
constexpr size_t kLength = 2 * kPage;  // a partial first page, a whole one, a partial last
constexpr size_t kArea = 3 * kPage;

// Whether any page of [addr, addr + length) (page-aligned) is mapped now: msync fails with
// ENOMEM on a page that is not.
bool Mapped(const void* addr, size_t length) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (size_t at = 0; at < length; at += page) {
    void* one = const_cast<uint8_t*>(static_cast<const uint8_t*>(addr) + at);
    if (msync(one, page, MS_ASYNC) == 0 || errno != ENOMEM) return true;
  }
  return false;
}

// After the application unmapped a region's pages at `unmapped` (kArea bytes), another thread
// may map something there before the peer's request executes: under the sanitizers their
// runtime does, now and then. The request then reaches that memory, as docs/differences.md
// says, and its success proves nothing: such a run is skipped.
constexpr const char* kTakenMeanwhile =
    "another mapping took the unmapped region's addresses before the request";
bool TakenMeanwhile(ibv_wc_status status, const void* unmapped) {
  return status == IBV_WC_SUCCESS && Mapped(unmapped, kArea);
}

uint8_t Pattern(size_t i) { return static_cast<uint8_t>(21 + i * 7); }

// Three anonymous pages holding Pattern; [area + kOffset, + kLength) registered on the
// server's side, its remote view on the client's.
class RegionPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(pair_.Connect());
    area_ = static_cast<uint8_t*>(
        mmap(nullptr, kArea, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, area_);
    for (size_t i = 0; i < kArea; ++i) area_[i] = Pattern(i);
    rpma_mr_local* region = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        registrations_.Register(pair_.peer, area_ + kOffset, kLength,
                                RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &region));
    ASSERT_NO_FATAL_FAILURE(registrations_.RemoteOf(region, &remote_));
    // Made before a test unmaps the area: nothing the process maps meanwhile may take its
    // place (the peer's write would land there).
    source_ = registrations_.NewBuffer(pair_.peer, kLength, RPMA_MR_USAGE_WRITE_SRC, 0x5A);
    ASSERT_NE(nullptr, source_);
    ASSERT_EQ(0, rpma_conn_get_cq(pair_.client, &client_cq_));
    ASSERT_EQ(0, rpma_conn_get_cq(pair_.server, &server_cq_));
  }

  void TearDown() override {
    registrations_.Release();
    pair_.Teardown();
    if (area_ != nullptr && area_ != MAP_FAILED) munmap(area_, kArea);
  }

  // The client writes kLength bytes of 0x5A to the whole region; its completion's status.
  ibv_wc_status WriteAll() {
    EXPECT_EQ(0, rpma_write(pair_.client, remote_, 0, source_->mr, 0, kLength,
                            RPMA_F_COMPLETION_ALWAYS, nullptr));
    return Completion(client_cq_);
  }

  // New anonymous pages of `length` bytes, registered with `usage` (asserted: use with
  // ASSERT_NO_FATAL_FAILURE); the caller unmaps them.
  void MapRegistered(size_t length, int usage, uint8_t** pages, rpma_mr_local** mr) {
    void* mapped =
        mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, mapped);
    *pages = static_cast<uint8_t*>(mapped);
    ASSERT_NO_FATAL_FAILURE(registrations_.Register(pair_.peer, mapped, length, usage, mr));
  }

  // MapRegistered(length, usage, pages, mr) holding 0x77, then the pages taken from the
  // application as an munmap takes them, their addresses kept: an empty file's shared mapping
  // in their place, whose every read faults (SIGBUS), through /proc/self/mem too. (Where pages
  // are only unmapped, whatever is mapped next may land there, and be read.) Asserted: use
  // with ASSERT_NO_FATAL_FAILURE. The caller unmaps them.
  void MapRegisteredThenTakeAway(size_t length, int usage, uint8_t** pages, rpma_mr_local** mr) {
    ASSERT_NO_FATAL_FAILURE(MapRegistered(length, usage, pages, mr));
    memset(*pages, 0x77, length);
    const int empty = memfd_create("region-pages-test", MFD_CLOEXEC);
    ASSERT_GE(empty, 0);
    void* in_place = mmap(*pages, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, empty, 0);
    close(empty);
    ASSERT_EQ(static_cast<void*>(*pages), in_place);
  }

  // A new connection in place of one an error ended, with no registrations (asserted: use
  // with ASSERT_NO_FATAL_FAILURE).
  void Reconnect() {
    registrations_.Release();
    pair_.Teardown();
    ASSERT_NO_FATAL_FAILURE(pair_.Connect());
    ASSERT_EQ(0, rpma_conn_get_cq(pair_.client, &client_cq_));
    ASSERT_EQ(0, rpma_conn_get_cq(pair_.server, &server_cq_));
  }

  ibv_wc_status Completion(rpma_cq* cq) {
    ibv_wc wc;
    wc.status = IBV_WC_GENERAL_ERR;
    WaitForCompletion(cq, &wc);
    return wc.status;
  }

  ConnectedPair pair_;
  Registrations registrations_;
  uint8_t* area_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  Buffer* source_ = nullptr;
  rpma_cq* client_cq_ = nullptr;
  rpma_cq* server_cq_ = nullptr;
};

// The application made its region read-only (to catch its own stray stores; the peer is the
// only writer): the write lands, as a NIC's DMA into the pinned pages does, and the
// application reads it; the bytes around the region and the protection stay.
TEST_F(RegionPagesTest, AWriteLandsInPagesMadeReadOnly) {
  ASSERT_EQ(0, mprotect(area_, kArea, PROT_READ));
  EXPECT_EQ(IBV_WC_SUCCESS, WriteAll());
  for (size_t i = 0; i < kArea; ++i) {
    const bool in_region = i >= kOffset && i < kOffset + kLength;
    ASSERT_EQ(in_region ? 0x5A : Pattern(i), area_[i]) << "byte " << i;
  }
  EXPECT_EQ(0, mprotect(area_, kArea, PROT_READ | PROT_WRITE));
}

// Pages made inaccessible (PROT_NONE) are read as a device reads them.
TEST_F(RegionPagesTest, AReadReachesPagesMadeInaccessible) {
  Buffer* local = registrations_.NewBuffer(pair_.peer, kLength, RPMA_MR_USAGE_READ_DST, 0);
  ASSERT_NE(nullptr, local);
  ASSERT_EQ(0, mprotect(area_, kArea, PROT_NONE));
  ASSERT_EQ(0, rpma_read(pair_.client, local->mr, 0, remote_, 0, kLength, RPMA_F_COMPLETION_ALWAYS,
                         nullptr));
  EXPECT_EQ(IBV_WC_SUCCESS, Completion(client_cq_));
  ASSERT_EQ(0, mprotect(area_, kArea, PROT_READ | PROT_WRITE));
  for (size_t i = 0; i < kLength; ++i)
    ASSERT_EQ(Pattern(kOffset + i), local->bytes[i]) << "byte " << i;
}

// A read into the requester's own buffer it made read-only lands there too.
TEST_F(RegionPagesTest, AReadLandsInALocalBufferMadeReadOnly) {
  uint8_t* local = nullptr;
  rpma_mr_local* local_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(MapRegistered(kLength, RPMA_MR_USAGE_READ_DST, &local, &local_mr));
  ASSERT_EQ(0, mprotect(local, kLength, PROT_READ));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr, 0, remote_, 0, kLength, RPMA_F_COMPLETION_ALWAYS,
                         nullptr));
  EXPECT_EQ(IBV_WC_SUCCESS, Completion(client_cq_));
  for (size_t i = 0; i < kLength; ++i) ASSERT_EQ(Pattern(kOffset + i), local[i]) << "byte " << i;
  registrations_.Release();
  munmap(local, kLength);
}

// The application unmapped its region while it was registered (a NIC would still write into
// the pages it pinned, which the process no longer sees): the simulator has nothing to copy
// to, so the write fails as one outside any region does, and the process goes on.
TEST_F(RegionPagesTest, AWriteToPagesUnmappedFailsWithRemoteAccessError) {
  ASSERT_EQ(0, munmap(area_, kArea));
  uint8_t* const unmapped = area_;
  area_ = nullptr;
  const ibv_wc_status status = WriteAll();
  if (TakenMeanwhile(status, unmapped)) GTEST_SKIP() << kTakenMeanwhile;
  EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, status);
}

TEST_F(RegionPagesTest, AReadOfPagesUnmappedFailsWithRemoteAccessError) {
  Buffer* local = registrations_.NewBuffer(pair_.peer, kLength, RPMA_MR_USAGE_READ_DST, 0x33);
  ASSERT_NE(nullptr, local);
  ASSERT_EQ(0, munmap(area_, kArea));
  uint8_t* const unmapped = area_;
  area_ = nullptr;
  ASSERT_EQ(0, rpma_read(pair_.client, local->mr, 0, remote_, 0, kLength, RPMA_F_COMPLETION_ALWAYS,
                         nullptr));
  const ibv_wc_status status = Completion(client_cq_);
  if (TakenMeanwhile(status, unmapped)) GTEST_SKIP() << kTakenMeanwhile;
  EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, status);
  EXPECT_EQ(std::vector<uint8_t>(kLength, 0x33), local->bytes);
}

TEST_F(RegionPagesTest, AnAtomicWriteToPagesUnmappedFailsWithRemoteAccessError) {
  ASSERT_EQ(0, munmap(area_, kArea));
  uint8_t* const unmapped = area_;
  area_ = nullptr;
  char value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_EQ(0,
            rpma_atomic_write(pair_.client, remote_, 8, value, RPMA_F_COMPLETION_ALWAYS, nullptr));
  const ibv_wc_status status = Completion(client_cq_);
  if (TakenMeanwhile(status, unmapped)) GTEST_SKIP() << kTakenMeanwhile;
  EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, status);
}

// A message into a receive buffer the application unmapped: as into one not registered,
// the receive fails with LOC_PROT_ERR and the sender with REM_OP_ERR.
TEST_F(RegionPagesTest, ASendIntoAReceiveBufferUnmappedFails) {
  uint8_t* receive = nullptr;
  rpma_mr_local* receive_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(MapRegistered(kPage, RPMA_MR_USAGE_RECV, &receive, &receive_mr));
  ASSERT_EQ(0, rpma_recv(pair_.server, receive_mr, 0, 64, nullptr));
  Buffer* message = registrations_.NewBuffer(pair_.peer, 64, RPMA_MR_USAGE_SEND, 0x44);
  ASSERT_NE(nullptr, message);
  ASSERT_EQ(0, munmap(receive, kPage));
  ASSERT_EQ(0, rpma_send(pair_.client, message->mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, nullptr));
  EXPECT_EQ(IBV_WC_REM_OP_ERR, Completion(client_cq_));
  EXPECT_EQ(IBV_WC_LOC_PROT_ERR, Completion(server_cq_));
}

// The requester took its own source buffer away under a posted write, as an munmap does (a
// NIC would still read the pages it pinned): nothing is left to send, so the write fails as
// one from a buffer no region holds, the target's bytes stay, and the process goes on. Both ways a
// payload leaves: copied into the request (below 16 KiB) and read from the buffer as the wire sends
// it, or by the peer through process_vm (16 KiB and more).
TEST_F(RegionPagesTest, AWriteFromALocalBufferUnmappedFailsWithLocalProtectionError) {
  for (size_t length : {kLength, size_t{64} * 1024}) {
    SCOPED_TRACE(length);
    Buffer* target = registrations_.NewBuffer(pair_.peer, length, RPMA_MR_USAGE_WRITE_DST, 0x11);
    ASSERT_NE(nullptr, target);
    rpma_mr_remote* remote = registrations_.RemoteOf(target);
    ASSERT_NE(nullptr, remote);
    uint8_t* local = nullptr;
    rpma_mr_local* local_mr = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        MapRegisteredThenTakeAway(length, RPMA_MR_USAGE_WRITE_SRC, &local, &local_mr));
    ASSERT_EQ(0, rpma_write(pair_.client, remote, 0, local_mr, 0, length, RPMA_F_COMPLETION_ALWAYS,
                            nullptr));
    EXPECT_EQ(IBV_WC_LOC_PROT_ERR, Completion(client_cq_));
    EXPECT_EQ(std::vector<uint8_t>(length, 0x11), target->bytes);
    ASSERT_NO_FATAL_FAILURE(Reconnect());  // this one is in error now
    munmap(local, length);
  }
}

// The same for a message: the send fails at the sender, and nothing lands in the receive.
TEST_F(RegionPagesTest, ASendFromABufferUnmappedFailsWithLocalProtectionError) {
  for (size_t length : {kLength, size_t{64} * 1024}) {
    SCOPED_TRACE(length);
    Buffer* receive = registrations_.NewBuffer(pair_.peer, length, RPMA_MR_USAGE_RECV, 0x22);
    ASSERT_NE(nullptr, receive);
    ASSERT_EQ(0, rpma_recv(pair_.server, receive->mr, 0, length, nullptr));
    uint8_t* local = nullptr;
    rpma_mr_local* local_mr = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        MapRegisteredThenTakeAway(length, RPMA_MR_USAGE_SEND, &local, &local_mr));
    ASSERT_EQ(0, rpma_send(pair_.client, local_mr, 0, length, RPMA_F_COMPLETION_ALWAYS, nullptr));
    EXPECT_EQ(IBV_WC_LOC_PROT_ERR, Completion(client_cq_));
    EXPECT_EQ(std::vector<uint8_t>(length, 0x22), receive->bytes);
    ASSERT_NO_FATAL_FAILURE(Reconnect());
    munmap(local, length);
  }
}

}  // namespace
