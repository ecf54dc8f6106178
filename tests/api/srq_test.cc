// Tests of rpma_srq_new, rpma_srq_delete, rpma_srq_get_rcq and the argument checks and queue depth
// of rpma_srq_recv.
#include <librpma.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

class SrqTest : public ::testing::Test {
 protected:
  void SetUp() override {
    struct ibv_context* ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
    ASSERT_EQ(0, rpma_peer_new(ctx, &peer_));
    ASSERT_EQ(0, rpma_srq_cfg_new(&cfg_));
  }
  void TearDown() override {
    EXPECT_EQ(0, rpma_srq_delete(&srq_));
    if (mr_ != nullptr) {
      EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    }
    EXPECT_EQ(0, rpma_srq_cfg_delete(&cfg_));
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  // Creates srq_ with the given sizes.
  void MakeSrq(uint32_t rq_size, uint32_t rcq_size) {
    ASSERT_EQ(0, rpma_srq_cfg_set_rq_size(cfg_, rq_size));
    ASSERT_EQ(0, rpma_srq_cfg_set_rcq_size(cfg_, rcq_size));
    ASSERT_EQ(0, rpma_srq_new(peer_, cfg_, &srq_));
    ASSERT_NE(nullptr, srq_);
  }

  void RegisterRecvBuffer() {
    ASSERT_EQ(0, rpma_mr_reg(peer_, buf_.data(), buf_.size(), RPMA_MR_USAGE_RECV, &mr_));
  }

  struct rpma_peer* peer_ = nullptr;
  struct rpma_srq_cfg* cfg_ = nullptr;
  struct rpma_srq* srq_ = nullptr;
  struct rpma_mr_local* mr_ = nullptr;
  std::vector<char> buf_ = std::vector<char>(4096);
};

// ---------------------------------------------------------------------------------------------
// rpma_srq_new / rpma_srq_delete
// ---------------------------------------------------------------------------------------------

TEST_F(SrqTest, NewNullPeerIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_new(nullptr, cfg_, &srq_));
  EXPECT_EQ(nullptr, srq_);
}

TEST_F(SrqTest, NewNullPeerNullCfgIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_new(nullptr, nullptr, &srq_));
  EXPECT_EQ(nullptr, srq_);
}

TEST_F(SrqTest, NewNullSrqPtrIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_new(peer_, cfg_, nullptr));
}

TEST_F(SrqTest, NewNullSrqPtrNullCfgIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_new(peer_, nullptr, nullptr));
}

TEST_F(SrqTest, NewAllNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_new(nullptr, nullptr, nullptr));
}

TEST_F(SrqTest, NewWithCfgSucceeds) {
  ASSERT_EQ(0, rpma_srq_new(peer_, cfg_, &srq_));
  EXPECT_NE(nullptr, srq_);
}

TEST_F(SrqTest, NewWithNullCfgSucceeds) {
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq_));
  EXPECT_NE(nullptr, srq_);
}

TEST_F(SrqTest, TwoSrqsOnOnePeer) {
  struct rpma_srq* srq2 = nullptr;
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq_));
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq2));
  EXPECT_NE(srq_, srq2);
  EXPECT_EQ(0, rpma_srq_delete(&srq2));
}

// The cfg is only read at creation time.
TEST_F(SrqTest, CfgCanBeDeletedAfterNew) {
  struct rpma_srq_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_srq_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_srq_cfg_set_rcq_size(cfg, 0));
  ASSERT_EQ(0, rpma_srq_new(peer_, cfg, &srq_));
  ASSERT_EQ(0, rpma_srq_cfg_delete(&cfg));
  struct rpma_cq* rcq = reinterpret_cast<struct rpma_cq*>(0x1);
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
  EXPECT_EQ(nullptr, rcq);
}

TEST_F(SrqTest, DeleteNullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_srq_delete(nullptr)); }

TEST_F(SrqTest, DeleteNullObjectReturnsZero) {
  ExpectDeleteOfNullObjectReturnsZero(rpma_srq_delete);
}

TEST_F(SrqTest, DeleteSucceedsAndNulls) {
  ASSERT_EQ(0, rpma_srq_new(peer_, cfg_, &srq_));
  EXPECT_EQ(0, rpma_srq_delete(&srq_));
  EXPECT_EQ(nullptr, srq_);
}

// Receives still posted when the SRQ is destroyed are simply dropped.
TEST_F(SrqTest, DeleteWithPostedReceivesSucceeds) {
  MakeSrq(4, 4);
  RegisterRecvBuffer();
  ASSERT_EQ(0, rpma_srq_recv(srq_, mr_, 0, 64, nullptr));
  ASSERT_EQ(0, rpma_srq_recv(srq_, mr_, 64, 64, nullptr));
  EXPECT_EQ(0, rpma_srq_delete(&srq_));
  EXPECT_EQ(nullptr, srq_);
}

// ---------------------------------------------------------------------------------------------
// rpma_srq_get_rcq
// ---------------------------------------------------------------------------------------------

TEST_F(SrqTest, GetRcqNullSrqIsInval) {
  struct rpma_cq* rcq = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_get_rcq(nullptr, &rcq));
}

TEST_F(SrqTest, GetRcqNullOutIsInval) {
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq_));
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_get_rcq(srq_, nullptr));
}

TEST_F(SrqTest, GetRcqBothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_get_rcq(nullptr, nullptr));
}

// Default rcq_size is 20 > 0, so a NULL cfg gives an RCQ.
TEST_F(SrqTest, NullCfgHasRcq) {
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq_));
  struct rpma_cq* rcq = nullptr;
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
  EXPECT_NE(nullptr, rcq);
}

TEST_F(SrqTest, DefaultCfgHasRcq) {
  ASSERT_EQ(0, rpma_srq_new(peer_, cfg_, &srq_));
  struct rpma_cq* rcq = nullptr;
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
  EXPECT_NE(nullptr, rcq);
}

TEST_F(SrqTest, RcqSizeOneHasRcq) {
  MakeSrq(20, 1);
  struct rpma_cq* rcq = nullptr;
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
  EXPECT_NE(nullptr, rcq);
}

TEST_F(SrqTest, RcqSizeZeroHasNoRcq) {
  MakeSrq(20, 0);
  struct rpma_cq* rcq = reinterpret_cast<struct rpma_cq*>(0x1);
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
  EXPECT_EQ(nullptr, rcq);
}

TEST_F(SrqTest, RcqIsStable) {
  MakeSrq(20, 5);
  struct rpma_cq* rcq1 = nullptr;
  struct rpma_cq* rcq2 = nullptr;
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq1));
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq2));
  EXPECT_EQ(rcq1, rcq2);
}

// The SRQ's RCQ has its own completion channel with a real fd, and nothing to poll yet.
TEST_F(SrqTest, RcqHasFdAndNoCompletion) {
  MakeSrq(20, 5);
  struct rpma_cq* rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
  ASSERT_NE(nullptr, rcq);
  int fd = -1;
  EXPECT_EQ(0, rpma_cq_get_fd(rcq, &fd));
  EXPECT_GE(fd, 0);
  struct ibv_wc wc;
  int got = -1;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(rcq, 1, &wc, &got));
}

// ---------------------------------------------------------------------------------------------
// rpma_srq_recv
// ---------------------------------------------------------------------------------------------

TEST_F(SrqTest, RecvNullSrqIsInval) {
  MakeSrq(4, 4);
  RegisterRecvBuffer();
  int ctx = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_recv(nullptr, mr_, 0, 64, &ctx));
}

TEST_F(SrqTest, RecvNullSrqZeroLengthIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_recv(nullptr, nullptr, 0, 0, nullptr));
}

TEST_F(SrqTest, RecvNullDstNonZeroOffsetIsInval) {
  MakeSrq(4, 4);
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_recv(srq_, nullptr, 1, 0, nullptr));
}

TEST_F(SrqTest, RecvNullDstNonZeroLenIsInval) {
  MakeSrq(4, 4);
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_recv(srq_, nullptr, 0, 1, nullptr));
}

TEST_F(SrqTest, RecvNullDstNonZeroOffsetAndLenIsInval) {
  MakeSrq(4, 4);
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_recv(srq_, nullptr, 8, 8, nullptr));
}

TEST_F(SrqTest, RecvNullDstZeroLengthSucceeds) {
  MakeSrq(4, 4);
  EXPECT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, nullptr));
}

TEST_F(SrqTest, RecvNullDstZeroLengthWithContextSucceeds) {
  MakeSrq(4, 4);
  int ctx = 0;
  EXPECT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, &ctx));
}

TEST_F(SrqTest, RecvIntoMrSucceeds) {
  MakeSrq(4, 4);
  RegisterRecvBuffer();
  int ctx = 0;
  EXPECT_EQ(0, rpma_srq_recv(srq_, mr_, 0, buf_.size(), &ctx));
}

TEST_F(SrqTest, RecvIntoMrNullContextSucceeds) {
  MakeSrq(4, 4);
  RegisterRecvBuffer();
  EXPECT_EQ(0, rpma_srq_recv(srq_, mr_, 128, 256, nullptr));
}

// Nothing has arrived, so posting receives produces no completion.
TEST_F(SrqTest, RecvAloneProducesNoCompletion) {
  MakeSrq(4, 4);
  RegisterRecvBuffer();
  ASSERT_EQ(0, rpma_srq_recv(srq_, mr_, 0, 64, nullptr));
  struct rpma_cq* rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
  struct ibv_wc wc;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(rcq, 1, &wc, nullptr));
}

// librpma checks no bounds: a range outside the MR is accepted at post time (a NIC reports it as
// an error completion when a message arrives).
TEST_F(SrqTest, RecvOutOfRangeIsAcceptedAtPostTime) {
  MakeSrq(4, 4);
  RegisterRecvBuffer();
  EXPECT_EQ(0, rpma_srq_recv(srq_, mr_, buf_.size() - 8, 64, nullptr));
}

// The SRQ holds at most rq_size posted receives; one more fails in ibv_post_srq_recv: PROVIDER.
TEST_F(SrqTest, RecvBeyondRqSizeIsProvider) {
  MakeSrq(4, 4);
  RegisterRecvBuffer();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(0, rpma_srq_recv(srq_, mr_, i * 64, 64, nullptr)) << i;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, mr_, 4 * 64, 64, nullptr));
}

TEST_F(SrqTest, ZeroLengthRecvBeyondRqSizeIsProvider) {
  MakeSrq(4, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, nullptr)) << i;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, nullptr, 0, 0, nullptr));
}

TEST_F(SrqTest, RecvBeyondDefaultRqSizeIsProvider) {
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq_));
  RegisterRecvBuffer();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(0, rpma_srq_recv(srq_, mr_, i * 64, 64, nullptr)) << i;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, mr_, 0, 64, nullptr));
}

TEST_F(SrqTest, RecvOneSlotQueue) {
  MakeSrq(1, 1);
  EXPECT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, nullptr));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, nullptr, 0, 0, nullptr));
}

// A full queue keeps rejecting; the argument checks still come first.
TEST_F(SrqTest, FullQueueStillChecksArguments) {
  MakeSrq(1, 1);
  ASSERT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_srq_recv(srq_, nullptr, 0, 1, nullptr));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, nullptr, 0, 0, nullptr));
}

}  // namespace
