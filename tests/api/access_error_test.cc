// access_error_test.cc -- NIC-enforced access rights, keys and bounds as error completions, and the queue-pair error state (WR_FLUSH_ERR) on both sides.
#include <librpma.h>
#include <string.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kSize = 4096;        // registered bytes of every region
constexpr size_t kGuard = 64;         // unregistered guard bytes before and after a region
constexpr uint8_t kGuardByte = 0xA5;  // what the guards hold
constexpr uint8_t kInitial = 0xEE;    // what a target region holds before the test

bool AllEqual(const uint8_t *p, size_t n, uint8_t value) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != value) return false;
  return true;
}

// A buffer of kGuard + kSize + kGuard bytes of which only the middle kSize are registered.
struct Guarded {
  Guarded() : bytes(kGuard + kSize + kGuard, kGuardByte) {
    memset(region(), kInitial, kSize);
  }
  uint8_t *region() { return bytes.data() + kGuard; }
  bool GuardsIntact() const {
    return AllEqual(bytes.data(), kGuard, kGuardByte) &&
           AllEqual(bytes.data() + kGuard + kSize, kGuard, kGuardByte);
  }
  bool RegionIs(uint8_t value) { return AllEqual(region(), kSize, value); }
  std::vector<uint8_t> bytes;
};

class AccessErrorTest : public PairFixture {
 protected:
  void Register(void *ptr, size_t size, int usage, rpma_mr_local **mr) {
    regs_.Register(pair_.peer, ptr, size, usage, mr);
  }

  void Descriptor(rpma_mr_local *mr, std::vector<uint8_t> *desc) {
    size_t size = 0;
    ASSERT_EQ(0, rpma_mr_get_descriptor_size(mr, &size));
    ASSERT_EQ(21u, size);
    desc->resize(size);
    ASSERT_EQ(0, rpma_mr_get_descriptor(mr, desc->data()));
  }

  // Registers `foreign`'s region with `usage` on a second peer (another protection domain).
  void RegisterForeign(Guarded *foreign, int usage, rpma_mr_local **mr) {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&other_peer_));
    ASSERT_NO_FATAL_FAILURE(regs_.Register(other_peer_, foreign->region(), kSize, usage, mr));
  }

  void FromDescriptor(const std::vector<uint8_t> &desc, rpma_mr_remote **remote) {
    ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), desc.size(), remote));
    regs_.Keep(*remote);
  }

  // The remote view of `mr`, decoded from its descriptor as a client would.
  void RemoteOf(rpma_mr_local *mr, rpma_mr_remote **remote) {
    std::vector<uint8_t> desc;
    ASSERT_NO_FATAL_FAILURE(Descriptor(mr, &desc));
    ASSERT_NO_FATAL_FAILURE(FromDescriptor(desc, remote));
  }

  // Connect(); registers target_ (server side, `target_usage`, remote view remote_) and local_
  // (client side, `local_usage`, filled with a pattern).
  void Setup(int target_usage, int local_usage) {
    ASSERT_NO_FATAL_FAILURE(ConnectPair());
    for (size_t i = 0; i < kSize; ++i) local_.region()[i] = static_cast<uint8_t>(i * 13 + 1);
    ASSERT_NO_FATAL_FAILURE(Register(target_.region(), kSize, target_usage, &target_mr_));
    ASSERT_NO_FATAL_FAILURE(RemoteOf(target_mr_, &remote_));
    ASSERT_NO_FATAL_FAILURE(Register(local_.region(), kSize, local_usage, &local_mr_));
    local_before_ = local_.bytes;
  }

  // Waits for one completion on `cq` and checks its status, wr_id and qp_num.
  void ExpectCompletion(rpma_cq *cq, ibv_wc_status status, const void *ctx, uint32_t qp_num) {
    ibv_wc wc;
    ASSERT_EQ(0, WaitWc(cq, &wc));
    EXPECT_EQ(status, wc.status) << "wr_id " << wc.wr_id;
    EXPECT_EQ(reinterpret_cast<uint64_t>(ctx), wc.wr_id);
    EXPECT_EQ(qp_num, wc.qp_num);
  }

  // Takes `n` completions from `cq` and returns them by wr_id (order-independent checks).
  void CollectByWrId(rpma_cq *cq, size_t n, std::map<uint64_t, ibv_wc> *out) {
    for (size_t i = 0; i < n; ++i) {
      ibv_wc wc;
      ASSERT_EQ(0, WaitWc(cq, &wc)) << "completion " << i << " of " << n << " missing";
      EXPECT_EQ(0u, out->count(wc.wr_id)) << "wr_id " << wc.wr_id << " completed twice";
      (*out)[wc.wr_id] = wc;
    }
  }

  // Makes the client's queue pair fail with a remote access error (a write past the end).
  void FailClientWithRemoteAccessError(const void *ctx) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, kSize - 4, local_mr_, 0, 8,
                            RPMA_F_COMPLETION_ALWAYS, ctx));
  }

  void ReleaseMore() override {
    if (other_peer_ != nullptr) {
      EXPECT_EQ(0, rpma_peer_delete(&other_peer_));
    }
  }

  Guarded target_;
  Guarded local_;
  std::vector<uint8_t> local_before_;
  rpma_mr_local *target_mr_ = nullptr;
  rpma_mr_remote *remote_ = nullptr;
  rpma_mr_local *local_mr_ = nullptr;
  rpma_peer *other_peer_ = nullptr;  // a second peer (protection domain), when a test needs one
};

constexpr int kAllUsages = 0xFF;
constexpr int kLocalUsage = RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST;

// ---------------------------------------------------------------------------------------------
// Remote access rights

TEST_F(AccessErrorTest, WriteToRegionWithoutWriteDst) {
  // Every other usage, including those that grant LOCAL_WRITE at the target.
  ASSERT_NO_FATAL_FAILURE(Setup(kAllUsages & ~RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x101)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x101), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
  EXPECT_TRUE(target_.GuardsIntact());
}

TEST_F(AccessErrorTest, WriteWithImmToRegionWithoutWriteDst) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 0, local_mr_, 0, 64,
                                   RPMA_F_COMPLETION_ON_ERROR, 5, Ctx(0x102)));
  // No receive is needed for the error; if the NIC wants one first, give it one.
  uint8_t recv_byte = 0x3C;
  rpma_mr_local *recv_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(&recv_byte, 1, RPMA_MR_USAGE_RECV, &recv_mr));
  ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 1, Ctx(0x103)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x102), client_qp_num_));
  // The target's receive never completes successfully: its QP is in error, the receive flushes.
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(server_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x103), server_qp_num_));
  EXPECT_EQ(0x3C, recv_byte);
  EXPECT_TRUE(target_.RegionIs(kInitial));
}

TEST_F(AccessErrorTest, ReadFromRegionWithoutReadSrc) {
  // No READ_SRC and no FLUSH_TYPE_*: nothing grants remote read.
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_DST |
                                    RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND |
                                    RPMA_MR_USAGE_RECV,
                                kLocalUsage));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x111)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x111), client_qp_num_));
  EXPECT_EQ(local_before_, local_.bytes);
}

TEST_F(AccessErrorTest, ReadFromFlushOnlyRegionsSucceeds) {
  // FLUSH_TYPE_* grant remote read (the portable flush is a read).
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, kLocalUsage));
  Guarded persistent;
  memset(persistent.region(), 0x61, kSize);
  rpma_mr_local *pmr = nullptr;
  rpma_mr_remote *premote = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      Register(persistent.region(), kSize, RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &pmr));
  ASSERT_NO_FATAL_FAILURE(RemoteOf(pmr, &premote));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 32, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x121)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, IBV_WC_SUCCESS, Ctx(0x121), client_qp_num_));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 32, premote, 0, 32, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x122)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, IBV_WC_SUCCESS, Ctx(0x122), client_qp_num_));
  EXPECT_TRUE(AllEqual(local_.region(), 32, kInitial));
  EXPECT_TRUE(AllEqual(local_.region() + 32, 32, 0x61));
}

// ---------------------------------------------------------------------------------------------
// Remote bounds: a table of (offset, length) outside [0, kSize), for write and read.

struct Range {
  const char *name;
  size_t offset;
  size_t len;
};

const Range kOutOfBounds[] = {
    {"StraddlesEnd", kSize - 4, 8},
    {"StartsAtEnd", kSize, 1},
    {"InRearGuard", kSize + 8, 8},
    {"OneByteTooLong", 0, kSize + 1},
    {"LengthTooLongFromMiddle", 16, kSize},
    {"OffsetPlusLenOverflows", SIZE_MAX - 3, 8},  // offset + len wraps to 4
    {"OffsetMax", SIZE_MAX, 1},                    // offset + len wraps to 0
    {"WrapsIntoFrontGuard", SIZE_MAX - kGuard + 1, 8},  // raddr + offset = raddr - kGuard
};

enum class Dir { kWrite, kRead };

class RemoteBoundsTest : public AccessErrorTest,
                         public ::testing::WithParamInterface<std::tuple<Dir, Range>> {};

TEST_P(RemoteBoundsTest, IsRemoteAccessErrorAndTouchesNothing) {
  const Dir dir = std::get<0>(GetParam());
  const Range range = std::get<1>(GetParam());
  // The local buffer is big enough for every length in the table.
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  std::vector<uint8_t> big(2 * kSize + 16, 0x77);
  rpma_mr_local *big_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(big.data(), big.size(), kLocalUsage, &big_mr));
  ASSERT_NO_FATAL_FAILURE(Register(target_.region(), kSize,
                                   RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &target_mr_));
  ASSERT_NO_FATAL_FAILURE(RemoteOf(target_mr_, &remote_));
  const std::vector<uint8_t> big_before = big;
  if (dir == Dir::kWrite) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, range.offset, big_mr, 0, range.len,
                            RPMA_F_COMPLETION_ALWAYS, Ctx(0x201)));
  } else {
    ASSERT_EQ(0, rpma_read(pair_.client, big_mr, 0, remote_, range.offset, range.len,
                           RPMA_F_COMPLETION_ALWAYS, Ctx(0x201)));
  }
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x201), client_qp_num_));
  EXPECT_TRUE(target_.GuardsIntact());
  EXPECT_TRUE(target_.RegionIs(kInitial));
  EXPECT_EQ(big_before, big);
}

INSTANTIATE_TEST_SUITE_P(
    Ranges, RemoteBoundsTest,
    ::testing::Combine(::testing::Values(Dir::kWrite, Dir::kRead),
                       ::testing::ValuesIn(kOutOfBounds)),
    [](const ::testing::TestParamInfo<std::tuple<Dir, Range>> &info) {
      return std::string(std::get<0>(info.param) == Dir::kWrite ? "Write" : "Read") +
             std::get<1>(info.param).name;
    });

TEST_F(AccessErrorTest, WriteExactlyToTheEdgeSucceeds) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, kSize - 8, local_mr_, 0, 8,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0x211)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, IBV_WC_SUCCESS, Ctx(0x211), client_qp_num_));
  EXPECT_EQ(0, memcmp(target_.region() + kSize - 8, local_.region(), 8));
  EXPECT_TRUE(target_.GuardsIntact());
}

// ---------------------------------------------------------------------------------------------
// Keys

TEST_F(AccessErrorTest, WriteWithWrongRkey) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  std::vector<uint8_t> desc;
  ASSERT_NO_FATAL_FAILURE(Descriptor(target_mr_, &desc));
  uint32_t rkey = desc[16] | desc[17] << 8 | desc[18] << 16 | static_cast<uint32_t>(desc[19]) << 24;
  rkey += 1;
  for (int i = 0; i < 4; ++i) desc[16 + i] = static_cast<uint8_t>(rkey >> (8 * i));
  rpma_mr_remote *forged = nullptr;
  ASSERT_NO_FATAL_FAILURE(FromDescriptor(desc, &forged));
  ASSERT_EQ(0, rpma_write(pair_.client, forged, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x301)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x301), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
  EXPECT_TRUE(target_.GuardsIntact());
}

TEST_F(AccessErrorTest, ReadWithWrongRkey) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  std::vector<uint8_t> desc;
  ASSERT_NO_FATAL_FAILURE(Descriptor(target_mr_, &desc));
  uint32_t rkey = desc[16] | desc[17] << 8 | desc[18] << 16 | static_cast<uint32_t>(desc[19]) << 24;
  rkey += 1;
  for (int i = 0; i < 4; ++i) desc[16 + i] = static_cast<uint8_t>(rkey >> (8 * i));
  rpma_mr_remote *forged = nullptr;
  ASSERT_NO_FATAL_FAILURE(FromDescriptor(desc, &forged));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, forged, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x302)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x302), client_qp_num_));
  EXPECT_EQ(local_before_, local_.bytes);
}

TEST_F(AccessErrorTest, ForgedLargerSizeDoesNotExtendTheRegion) {
  // The size in a descriptor is informational; the NIC checks the registered length.
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  std::vector<uint8_t> desc;
  ASSERT_NO_FATAL_FAILURE(Descriptor(target_mr_, &desc));
  desc[9] += 1;  // length += 256
  rpma_mr_remote *forged = nullptr;
  ASSERT_NO_FATAL_FAILURE(FromDescriptor(desc, &forged));
  size_t size = 0;
  ASSERT_EQ(0, rpma_mr_remote_get_size(forged, &size));
  EXPECT_EQ(kSize + 256, size);
  ASSERT_EQ(0, rpma_write(pair_.client, forged, kSize, local_mr_, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x306)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x306), client_qp_num_));
  EXPECT_TRUE(target_.GuardsIntact());
}

TEST_F(AccessErrorTest, WriteToDeregisteredRegion) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  ASSERT_NO_FATAL_FAILURE(regs_.Deregister(&target_mr_));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x303)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x303), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
}

TEST_F(AccessErrorTest, WriteToRegionOfAnotherProtectionDomain) {
  // The rkey is valid, but registered in another peer's protection domain than the target
  // connection's: the responder's NIC does not accept it.
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  Guarded foreign;
  rpma_mr_local *foreign_mr = nullptr;
  rpma_mr_remote *foreign_remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RegisterForeign(&foreign, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &foreign_mr));
  ASSERT_NO_FATAL_FAILURE(RemoteOf(foreign_mr, &foreign_remote));
  ASSERT_EQ(0, rpma_write(pair_.client, foreign_remote, 0, local_mr_, 0, 64,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0x304)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x304), client_qp_num_));
  EXPECT_TRUE(foreign.RegionIs(kInitial)) << "bytes landed in another protection domain";
}

TEST_F(AccessErrorTest, ReadFromRegionOfAnotherProtectionDomain) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  Guarded foreign;
  rpma_mr_local *foreign_mr = nullptr;
  rpma_mr_remote *foreign_remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(RegisterForeign(&foreign, RPMA_MR_USAGE_READ_SRC, &foreign_mr));
  ASSERT_NO_FATAL_FAILURE(RemoteOf(foreign_mr, &foreign_remote));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, foreign_remote, 0, 64,
                         RPMA_F_COMPLETION_ALWAYS, Ctx(0x305)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x305), client_qp_num_));
  EXPECT_EQ(local_before_, local_.bytes);
}

// ---------------------------------------------------------------------------------------------
// Local protection and bounds

TEST_F(AccessErrorTest, ReadIntoLocalRegionOfAnotherProtectionDomain) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  Guarded foreign;
  rpma_mr_local *foreign_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(RegisterForeign(&foreign, RPMA_MR_USAGE_READ_DST, &foreign_mr));
  ASSERT_EQ(0, rpma_read(pair_.client, foreign_mr, 0, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x403)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x403), client_qp_num_));
  EXPECT_TRUE(foreign.RegionIs(kInitial));
}

TEST_F(AccessErrorTest, WriteFromLocalRegionOfAnotherProtectionDomain) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  Guarded foreign;
  rpma_mr_local *foreign_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(RegisterForeign(&foreign, RPMA_MR_USAGE_WRITE_SRC, &foreign_mr));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, foreign_mr, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x404)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x404), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
}

TEST_F(AccessErrorTest, ReadIntoSendOnlyLocalRegion) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_SEND));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x401)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x401), client_qp_num_));
  EXPECT_EQ(local_before_, local_.bytes);
}

TEST_F(AccessErrorTest, ReadIntoReadSrcOnlyLocalRegion) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_READ_SRC));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 64, RPMA_F_COMPLETION_ON_ERROR,
                         Ctx(0x402)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x402), client_qp_num_));
  EXPECT_EQ(local_before_, local_.bytes);
}

TEST_F(AccessErrorTest, WriteFromLocalOutOfBounds) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, kSize - 4, 8,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0x411)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x411), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
}

TEST_F(AccessErrorTest, WriteFromLocalOffsetOverflow) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, SIZE_MAX - 3, 8,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0x412)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x412), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
}

TEST_F(AccessErrorTest, ReadIntoLocalOutOfBounds) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, kSize - 4, remote_, 0, 8,
                         RPMA_F_COMPLETION_ALWAYS, Ctx(0x413)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x413), client_qp_num_));
  EXPECT_TRUE(local_.GuardsIntact());
  EXPECT_EQ(local_before_, local_.bytes);
}

TEST_F(AccessErrorTest, ReadIntoLocalPastEndWithValidRemoteRange) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  // Remote [0, kSize - 4) is fine; local [8, kSize + 4) is not.
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 8, remote_, 0, kSize - 4,
                         RPMA_F_COMPLETION_ALWAYS, Ctx(0x414)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x414), client_qp_num_));
  EXPECT_TRUE(local_.GuardsIntact());
  EXPECT_EQ(local_before_, local_.bytes);
}

// ---------------------------------------------------------------------------------------------
// The error state

TEST_F(AccessErrorTest, EverythingPostedAfterAnErrorIsFlushed) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
                                    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
                                kLocalUsage | RPMA_MR_USAGE_SEND));
  ASSERT_NO_FATAL_FAILURE(FailClientWithRemoteAccessError(Ctx(0x500)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x500), client_qp_num_));

  // Valid work requests of every kind, signalled or not: posting succeeds, all flush.
  const char value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x501)));
  EXPECT_EQ(0, rpma_write(pair_.client, remote_, 64, local_mr_, 64, 64,
                          RPMA_F_COMPLETION_ON_ERROR, Ctx(0x502)));
  EXPECT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x503)));
  EXPECT_EQ(0, rpma_read(pair_.client, local_mr_, 64, remote_, 64, 64, RPMA_F_COMPLETION_ON_ERROR,
                         Ctx(0x504)));
  EXPECT_EQ(0, rpma_write(pair_.client, nullptr, 0, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x505)));
  EXPECT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 128, local_mr_, 0, 8,
                                   RPMA_F_COMPLETION_ON_ERROR, 9, Ctx(0x506)));
  EXPECT_EQ(0, rpma_atomic_write(pair_.client, remote_, 256, value, RPMA_F_COMPLETION_ALWAYS,
                                 Ctx(0x507)));
  EXPECT_EQ(0, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ON_ERROR, Ctx(0x508)));
  EXPECT_EQ(0, rpma_send(pair_.client, local_mr_, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(0x509)));

  // Send-queue completions in posting order, every one WR_FLUSH_ERR.
  for (uintptr_t id = 0x501; id <= 0x509; ++id) {
    ASSERT_NO_FATAL_FAILURE(
        ExpectCompletion(client_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(id), client_qp_num_));
  }
  ExpectNoCompletion(client_cq_);
  EXPECT_TRUE(target_.RegionIs(kInitial)) << "a flushed write reached the target";
  EXPECT_TRUE(target_.GuardsIntact());
  EXPECT_EQ(local_before_, local_.bytes) << "a flushed read reached the local buffer";
}

TEST_F(AccessErrorTest, ReceivesOfTheFailingSideAreFlushed) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  uint8_t recv_buf[2] = {0x11, 0x22};
  rpma_mr_local *recv_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(recv_buf, sizeof(recv_buf), RPMA_MR_USAGE_RECV, &recv_mr));
  ASSERT_EQ(0, rpma_recv(pair_.client, recv_mr, 0, 1, Ctx(0x521)));
  ASSERT_EQ(0, rpma_recv(pair_.client, recv_mr, 1, 1, Ctx(0x522)));
  ASSERT_NO_FATAL_FAILURE(FailClientWithRemoteAccessError(Ctx(0x520)));

  std::map<uint64_t, ibv_wc> got;
  ASSERT_NO_FATAL_FAILURE(CollectByWrId(client_cq_, 3, &got));
  ASSERT_EQ(1u, got.count(0x520));
  ASSERT_EQ(1u, got.count(0x521));
  ASSERT_EQ(1u, got.count(0x522));
  EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, got[0x520].status);
  EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, got[0x521].status);
  EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, got[0x522].status);
  EXPECT_EQ(client_qp_num_, got[0x521].qp_num);

  // A receive posted in the error state: accepted, then flushed.
  EXPECT_EQ(0, rpma_recv(pair_.client, recv_mr, 0, 1, Ctx(0x523)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x523), client_qp_num_));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(0x11, recv_buf[0]);
  EXPECT_EQ(0x22, recv_buf[1]);
}

TEST_F(AccessErrorTest, LocalErrorMovesOnlyTheRequesterToError) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST,
                                RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_WRITE_SRC));
  uint8_t recv_byte = 0x44;
  rpma_mr_local *recv_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(&recv_byte, 1, RPMA_MR_USAGE_RECV, &recv_mr));
  ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 1, Ctx(0x551)));
  // SEND | WRITE_SRC grants LOCAL_WRITE (WRITE_SRC), so use a SEND-only region to fail locally.
  rpma_mr_local *send_only = nullptr;
  Guarded send_buf;
  ASSERT_NO_FATAL_FAILURE(Register(send_buf.region(), kSize, RPMA_MR_USAGE_SEND, &send_only));
  ASSERT_EQ(0, rpma_read(pair_.client, send_only, 0, remote_, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x550)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_LOC_PROT_ERR, Ctx(0x550), client_qp_num_));
  // The requester is in error: a valid write flushes and never reaches the target.
  EXPECT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x552)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x552), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
  EXPECT_TRUE(send_buf.RegionIs(kInitial));
  // Nothing reached the target's NIC: its receive is still posted, nothing completed there.
  ExpectNoCompletion(server_cq_);
  EXPECT_EQ(0x44, recv_byte);
}

// A remote-side error puts the target's queue pair in error as well.
class RemoteErrorStateTest : public AccessErrorTest, public ::testing::WithParamInterface<Dir> {};

TEST_P(RemoteErrorStateTest, TargetQueuePairEntersErrorToo) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  uint8_t recv_buf[2] = {0x11, 0x22};
  rpma_mr_local *recv_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(recv_buf, sizeof(recv_buf), RPMA_MR_USAGE_RECV, &recv_mr));
  ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 1, Ctx(0x531)));
  ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 1, 1, Ctx(0x532)));

  if (GetParam() == Dir::kWrite) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, kSize, local_mr_, 0, 8,
                            RPMA_F_COMPLETION_ALWAYS, Ctx(0x530)));
  } else {
    ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, kSize, 8,
                           RPMA_F_COMPLETION_ALWAYS, Ctx(0x530)));
  }
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x530), client_qp_num_));

  // The target's posted receives flush.
  std::map<uint64_t, ibv_wc> got;
  ASSERT_NO_FATAL_FAILURE(CollectByWrId(server_cq_, 2, &got));
  ASSERT_EQ(1u, got.count(0x531));
  ASSERT_EQ(1u, got.count(0x532));
  EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, got[0x531].status);
  EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, got[0x532].status);
  EXPECT_EQ(server_qp_num_, got[0x531].qp_num);
  EXPECT_EQ(server_qp_num_, got[0x532].qp_num);

  // So do its later receives and its own one-sided operations.
  Guarded client_target;
  rpma_mr_local *ct_mr = nullptr;
  rpma_mr_remote *ct_remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(client_target.region(), kSize, RPMA_MR_USAGE_WRITE_DST, &ct_mr));
  ASSERT_NO_FATAL_FAILURE(RemoteOf(ct_mr, &ct_remote));
  EXPECT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 1, Ctx(0x533)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(server_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x533), server_qp_num_));
  EXPECT_EQ(0, rpma_write(pair_.server, ct_remote, 0, target_mr_, 0, 64,
                          RPMA_F_COMPLETION_ON_ERROR, Ctx(0x534)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(server_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x534), server_qp_num_));
  ExpectNoCompletion(server_cq_);
  EXPECT_TRUE(client_target.RegionIs(kInitial));
  EXPECT_EQ(0x11, recv_buf[0]);
  EXPECT_EQ(0x22, recv_buf[1]);
}

INSTANTIATE_TEST_SUITE_P(Dirs, RemoteErrorStateTest, ::testing::Values(Dir::kWrite, Dir::kRead),
                         [](const ::testing::TestParamInfo<Dir> &info) {
                           return std::string(info.param == Dir::kWrite ? "Write" : "Read");
                         });

TEST_F(AccessErrorTest, UnsignalledFailureStillCompletesAndLaterUnsignalledFlush) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, kSize, local_mr_, 0, 8,
                          RPMA_F_COMPLETION_ON_ERROR, Ctx(0x541)));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 8, RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(0x542)));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 8, local_mr_, 8, 8, RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(0x543)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x541), client_qp_num_));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x542), client_qp_num_));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x543), client_qp_num_));
  ExpectNoCompletion(client_cq_);
  EXPECT_TRUE(target_.RegionIs(kInitial));
}

}  // namespace
