// access_error_test.cc -- NIC-enforced access rights, keys and bounds as error completions, checked
// not to touch memory outside the registered regions.
#include <librpma.h>
#include <string.h>

#include <cstdint>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/access_fixture.h"
#include "tests/common/test_support.h"

namespace {

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
  rpma_mr_local* recv_mr = nullptr;
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
  rpma_mr_local* pmr = nullptr;
  rpma_mr_remote* premote = nullptr;
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
  const char* name;
  size_t offset;
  size_t len;
};

const Range kOutOfBounds[] = {
    {"StraddlesEnd", kSize - 4, 8},
    {"StartsAtEnd", kSize, 1},
    {"InRearGuard", kSize + 8, 8},
    {"OneByteTooLong", 0, kSize + 1},
    {"LengthTooLongFromMiddle", 16, kSize},
    {"OffsetPlusLenOverflows", SIZE_MAX - 3, 8},        // offset + len wraps to 4
    {"OffsetMax", SIZE_MAX, 1},                         // offset + len wraps to 0
    {"WrapsIntoFrontGuard", SIZE_MAX - kGuard + 1, 8},  // raddr + offset = raddr - kGuard
};

class RemoteBoundsTest : public AccessErrorTest,
                         public ::testing::WithParamInterface<std::tuple<Dir, Range>> {};

TEST_P(RemoteBoundsTest, IsRemoteAccessErrorAndTouchesNothing) {
  const Dir dir = std::get<0>(GetParam());
  const Range range = std::get<1>(GetParam());
  // The local buffer is big enough for every length in the table.
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  std::vector<uint8_t> big(2 * kSize + 16, 0x77);
  rpma_mr_local* big_mr = nullptr;
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

INSTANTIATE_TEST_SUITE_P(Ranges, RemoteBoundsTest,
                         ::testing::Combine(::testing::Values(Dir::kWrite, Dir::kRead),
                                            ::testing::ValuesIn(kOutOfBounds)),
                         [](const ::testing::TestParamInfo<std::tuple<Dir, Range>>& info) {
                           return std::string(std::get<0>(info.param) == Dir::kWrite ? "Write"
                                                                                     : "Read") +
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
  rpma_mr_remote* forged = nullptr;
  ASSERT_NO_FATAL_FAILURE(ForgedRkeyRemote(target_mr_, &forged));
  ASSERT_EQ(0, rpma_write(pair_.client, forged, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x301)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x301), client_qp_num_));
  EXPECT_TRUE(target_.RegionIs(kInitial));
  EXPECT_TRUE(target_.GuardsIntact());
}

TEST_F(AccessErrorTest, ReadWithWrongRkey) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, kLocalUsage));
  rpma_mr_remote* forged = nullptr;
  ASSERT_NO_FATAL_FAILURE(ForgedRkeyRemote(target_mr_, &forged));
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
  rpma_mr_remote* forged = nullptr;
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
  rpma_mr_local* foreign_mr = nullptr;
  rpma_mr_remote* foreign_remote = nullptr;
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
  rpma_mr_local* foreign_mr = nullptr;
  rpma_mr_remote* foreign_remote = nullptr;
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
  rpma_mr_local* foreign_mr = nullptr;
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
  rpma_mr_local* foreign_mr = nullptr;
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

}  // namespace
