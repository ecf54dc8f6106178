// flush_test.cc -- rpma_flush as rpma_flush(3) defines it: INVAL/NOSUPP checks, completion opcodes
// (portable and native), ordering behind writes, bounds.
#include <librpma.h>
#include <rpma_sim.h>
#include <string.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kSize = 4096;
constexpr uint8_t kInitial = 0xEE;
constexpr int kBothFlushTypes =
    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

class FlushTest : public PairFixture {
 protected:
  // Connects a new pair (its peer reads the device capabilities now) and registers the target
  // (server side) with `target_usage`, its remote view remote_, and a local source region.
  void Setup(int target_usage, size_t target_size = kSize) {
    ASSERT_NO_FATAL_FAILURE(ConnectPair());
    target_.assign(target_size, kInitial);
    local_.resize(kSize);
    for (size_t i = 0; i < kSize; ++i) local_[i] = static_cast<uint8_t>(i * 31 + 7);
    ASSERT_NO_FATAL_FAILURE(
        regs_.Register(pair_.peer, target_.data(), target_.size(), target_usage, &target_mr_));
    ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(target_mr_, &remote_, &desc_));
    ASSERT_NO_FATAL_FAILURE(regs_.Register(pair_.peer, local_.data(), local_.size(),
                                           RPMA_MR_USAGE_WRITE_SRC, &local_mr_));
  }

  // What example 05 does on the client: apply the server's direct-write-to-pmem setting.
  void ApplyDirectWrite(bool supported) {
    rpma_peer_cfg* pcfg = nullptr;
    ASSERT_EQ(0, rpma_peer_cfg_new(&pcfg));
    ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(pcfg, supported));
    ASSERT_EQ(0, rpma_conn_apply_remote_peer_cfg(pair_.client, pcfg));
    ASSERT_EQ(0, rpma_peer_cfg_delete(&pcfg));
  }

  void ExpectCompletion(ibv_wc_status status, const void* ctx, ibv_wc_opcode opcode) {
    ExpectQpCompletion(client_cq_, client_qp_num_, ctx, status, opcode);
  }

  std::vector<uint8_t> target_;
  std::vector<uint8_t> local_;
  std::vector<uint8_t> desc_;
  rpma_mr_local* target_mr_ = nullptr;
  rpma_mr_local* local_mr_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  rpma_mr_remote* extra_remote_ = nullptr;  // a hand-crafted one, when a test needs it
};

// ---------------------------------------------------------------------------------------------
// INVAL

TEST_F(FlushTest, InvalConnNull) {
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(nullptr, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(nullptr, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, InvalDstNull) {
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(pair_.client, nullptr, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(pair_.client, nullptr, 0, 0, RPMA_FLUSH_TYPE_VISIBILITY,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, InvalFlagsZero) {
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, 0, Ctx(1)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, InvalComesBeforeNosupp) {
  // PERSISTENT without direct write would be NOSUPP, but the INVAL checks come first.
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT, 0, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(nullptr, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, InvalUnknownType) {
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes));
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite(true));  // nothing else stands in the way
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(pair_.client, remote_, 0, 8, (enum rpma_flush_type)2,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(pair_.client, remote_, 0, 8, (enum rpma_flush_type) - 1,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(pair_.client, remote_, 0, 8, (enum rpma_flush_type)0x7fff,
                                     RPMA_F_COMPLETION_ON_ERROR, Ctx(3)));
  ExpectNoCompletion(client_cq_);
}

// ---------------------------------------------------------------------------------------------
// NOSUPP

TEST_F(FlushTest, NosuppPersistentWithoutDirectWrite) {
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes));
  // A new connection's flag starts false.
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                                      RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  // Applying a peer cfg with false keeps it so.
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite(false));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                                      RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, NosuppPersistentWhenRegionLacksPersistent) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_READ_SRC |
                                RPMA_MR_USAGE_WRITE_DST));
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite(true));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                                      RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, NosuppVisibilityWhenRegionLacksVisibility) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_READ_SRC |
                                RPMA_MR_USAGE_WRITE_DST));
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite(true));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                                      RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, NosuppBothTypesWhenRegionHasNoFlushUsage) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST));
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite(true));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                                      RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                                      RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ExpectNoCompletion(client_cq_);
}

// ---------------------------------------------------------------------------------------------
// Success, portable path

TEST_F(FlushTest, VisibilityCompletesAsRdmaRead) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, kSize, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF1)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF1), IBV_WC_RDMA_READ));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(std::vector<uint8_t>(kSize, kInitial), target_);
}

TEST_F(FlushTest, PersistentWithDirectWriteCompletesAsRdmaRead) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT));
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite(true));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 128, 256, RPMA_FLUSH_TYPE_PERSISTENT,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF2), IBV_WC_RDMA_READ));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, NullOpContextGivesWrIdZero) {
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, nullptr, IBV_WC_RDMA_READ));
}

TEST_F(FlushTest, OnErrorOnlyGivesNoCompletionOnSuccess) {
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ON_ERROR, Ctx(0xF3)));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 8, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF4)));
  // Send-queue completions are in order: the first one is the signalled flush.
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF4), IBV_WC_RDMA_READ));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, FlushAfterUnsignalledWritesIsTheOnlyCompletion) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  const size_t chunk = 100;
  for (size_t i = 0; i < 5; ++i) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, 500 * i, local_mr_, chunk * i, chunk,
                            RPMA_F_COMPLETION_ON_ERROR, Ctx(0x100 + i)))
        << "write " << i;
  }
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, kSize, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF5)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF5), IBV_WC_RDMA_READ));
  ExpectNoCompletion(client_cq_);
  // The flush completion means every earlier write has been placed.
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(0, memcmp(target_.data() + 500 * i, local_.data() + chunk * i, chunk))
        << "write " << i << " missing";
    EXPECT_EQ(kInitial, target_[500 * i + chunk]);
  }
}

TEST_F(FlushTest, PortableFlushIgnoresLen) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  // An 8-byte read at dst_offset; len plays no part (librpma's APM path).
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, 1 << 20, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF6)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF6), IBV_WC_RDMA_READ));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, kSize - 8, 0, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF7)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF7), IBV_WC_RDMA_READ));
}

// ---------------------------------------------------------------------------------------------
// Errors, portable path

TEST_F(FlushTest, OffsetPlusEightBeyondRegionIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 64));
  // 60 + 8 > 64, although len 4 would fit.
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 60, 4, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xE1)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xE1), IBV_WC_RDMA_READ));
}

TEST_F(FlushTest, OffsetPlusEightOverflowIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 64));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, SIZE_MAX - 3, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ON_ERROR, Ctx(0xE2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xE2), IBV_WC_RDMA_READ));
}

TEST_F(FlushTest, LastEightBytesOfRegionSucceed) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 64));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 56, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xE3)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xE3), IBV_WC_RDMA_READ));
}

TEST_F(FlushTest, WrongRkeyIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  std::vector<uint8_t> forged = desc_;
  forged[16] ^= 0x01;  // rkey, least significant byte
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(forged.data(), forged.size(), &extra_remote_));
  regs_.Keep(extra_remote_);
  ASSERT_EQ(0, rpma_flush(pair_.client, extra_remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xE4)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xE4), IBV_WC_RDMA_READ));
}

TEST_F(FlushTest, RegionWithoutRemoteReadIsRemoteAccessError) {
  // The region grants only remote write; a descriptor that claims VISIBILITY passes librpma's
  // checks, but the NIC refuses the read the portable flush is made of.
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST));
  std::vector<uint8_t> forged = desc_;
  forged[20] |= RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(forged.data(), forged.size(), &extra_remote_));
  regs_.Keep(extra_remote_);
  ASSERT_EQ(0, rpma_flush(pair_.client, extra_remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xE5)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xE5), IBV_WC_RDMA_READ));
}

// ---------------------------------------------------------------------------------------------
// Native path

TEST_F(FlushTest, NativeFlushCompletesAsIbvWcFlush) {
  ScopedCap cap(RPMA_SIM_CAP_NATIVE_FLUSH);
  ASSERT_NO_FATAL_FAILURE(Setup(kBothFlushTypes | RPMA_MR_USAGE_WRITE_DST));
  ASSERT_NO_FATAL_FAILURE(ApplyDirectWrite(true));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(0x1)));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, 64, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF8)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF8), IBV_WC_FLUSH));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, 64, RPMA_FLUSH_TYPE_PERSISTENT,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xF9)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xF9), IBV_WC_FLUSH));
  EXPECT_EQ(8, static_cast<int>(IBV_WC_FLUSH));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(0, memcmp(target_.data(), local_.data(), 64));
}

TEST_F(FlushTest, NativeFlushChecksStillApply) {
  ScopedCap cap(RPMA_SIM_CAP_NATIVE_FLUSH);
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_PERSISTENT,
                                      RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_flush(pair_.client, remote_, 0, 8, (enum rpma_flush_type)2,
                                     RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(FlushTest, CapRestoredMeansPortableAgain) {
  { ScopedCap cap(RPMA_SIM_CAP_NATIVE_FLUSH); }
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  ASSERT_EQ(0, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xFA)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xFA), IBV_WC_RDMA_READ));
}

}  // namespace
