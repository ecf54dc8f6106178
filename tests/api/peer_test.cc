// Tests of rpma_peer_new and rpma_peer_delete.
#include <librpma.h>

#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

struct ibv_context* Context(rpma_util_ibv_context_type type) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(0, rpma_utils_get_ibv_context("127.0.0.1", type, &ctx));
  EXPECT_NE(nullptr, ctx);
  return ctx;
}

class PeerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_ = Context(RPMA_UTIL_IBV_CONTEXT_LOCAL);
    ASSERT_NE(nullptr, ctx_);
  }

  struct ibv_context* ctx_ = nullptr;
  std::vector<char> buf_ = std::vector<char>(4096);
};

// ---------------------------------------------------------------------------------------------
// rpma_peer_new
// ---------------------------------------------------------------------------------------------

TEST_F(PeerTest, NewNullCtxIsInval) {
  struct rpma_peer* peer = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_new(nullptr, &peer));
  EXPECT_EQ(nullptr, peer);
}

TEST_F(PeerTest, NewNullPeerPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_peer_new(ctx_, nullptr)); }

TEST_F(PeerTest, NewBothNullIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_peer_new(nullptr, nullptr)); }

TEST_F(PeerTest, NewAndDeleteSucceed) {
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer));
  EXPECT_NE(nullptr, peer);
  EXPECT_EQ(0, rpma_peer_delete(&peer));
  EXPECT_EQ(nullptr, peer);
}

TEST_F(PeerTest, NewFromRemoteContextSucceeds) {
  struct ibv_context* remote_ctx = Context(RPMA_UTIL_IBV_CONTEXT_REMOTE);
  ASSERT_NE(nullptr, remote_ctx);
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(remote_ctx, &peer));
  EXPECT_NE(nullptr, peer);
  EXPECT_EQ(0, rpma_peer_delete(&peer));
  EXPECT_EQ(nullptr, peer);
}

TEST_F(PeerTest, TwoPeersOnOneContextAreDistinct) {
  struct rpma_peer* peer1 = nullptr;
  struct rpma_peer* peer2 = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer1));
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer2));
  EXPECT_NE(peer1, peer2);
  EXPECT_EQ(0, rpma_peer_delete(&peer1));
  EXPECT_EQ(0, rpma_peer_delete(&peer2));
}

// ---------------------------------------------------------------------------------------------
// rpma_peer_delete
// ---------------------------------------------------------------------------------------------

TEST_F(PeerTest, DeleteNullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_peer_delete(nullptr)); }

TEST_F(PeerTest, DeleteNullObjectReturnsZero) {
  ExpectDeleteOfNullObjectReturnsZero(rpma_peer_delete);
}

TEST_F(PeerTest, DeleteAfterMrDeregSucceeds) {
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer));
  struct rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, buf_.data(), buf_.size(), RPMA_MR_USAGE_READ_SRC, &mr));
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
  EXPECT_EQ(nullptr, peer);
}

// ibv_dealloc_pd fails with EBUSY while an MR exists; the peer is freed and NULLed anyway, and the
// MR can still be deregistered afterwards.
TEST_F(PeerTest, DeleteWithLiveMrIsProviderAndStillNulls) {
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer));
  struct rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, buf_.data(), buf_.size(), RPMA_MR_USAGE_READ_SRC, &mr));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_peer_delete(&peer));
  EXPECT_EQ(nullptr, peer);
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_EQ(nullptr, mr);
}

TEST_F(PeerTest, DeleteWithTwoLiveMrsIsProviderAndBothDeregLater) {
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer));
  struct rpma_mr_local* mr1 = nullptr;
  struct rpma_mr_local* mr2 = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, buf_.data(), 100, RPMA_MR_USAGE_READ_SRC, &mr1));
  ASSERT_EQ(0, rpma_mr_reg(peer, buf_.data() + 100, 100, RPMA_MR_USAGE_WRITE_DST, &mr2));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_peer_delete(&peer));
  EXPECT_EQ(nullptr, peer);
  EXPECT_EQ(0, rpma_mr_dereg(&mr2));
  EXPECT_EQ(0, rpma_mr_dereg(&mr1));
  EXPECT_EQ(nullptr, mr1);
  EXPECT_EQ(nullptr, mr2);
}

// A live MR keeps its descriptor readable after the failed peer delete.
TEST_F(PeerTest, LiveMrUsableAfterFailedPeerDelete) {
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer));
  struct rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, buf_.data(), buf_.size(), RPMA_MR_USAGE_READ_SRC, &mr));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_peer_delete(&peer));
  size_t size = 0;
  EXPECT_EQ(0, rpma_mr_get_size(mr, &size));
  EXPECT_EQ(buf_.size(), size);
  void* ptr = nullptr;
  EXPECT_EQ(0, rpma_mr_get_ptr(mr, &ptr));
  EXPECT_EQ(buf_.data(), ptr);
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
}

// An SRQ is created on the peer's protection domain, so it keeps the PD busy like an MR does.
TEST_F(PeerTest, DeleteWithLiveSrqIsProviderAndStillNulls) {
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer));
  struct rpma_srq* srq = nullptr;
  ASSERT_EQ(0, rpma_srq_new(peer, nullptr, &srq));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_peer_delete(&peer));
  EXPECT_EQ(nullptr, peer);
  EXPECT_EQ(0, rpma_srq_delete(&srq));
  EXPECT_EQ(nullptr, srq);
}

TEST_F(PeerTest, DeleteAfterSrqDeleteSucceeds) {
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer));
  struct rpma_srq* srq = nullptr;
  ASSERT_EQ(0, rpma_srq_new(peer, nullptr, &srq));
  EXPECT_EQ(0, rpma_srq_delete(&srq));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
  EXPECT_EQ(nullptr, peer);
}

// An MR of one peer does not keep another peer busy.
TEST_F(PeerTest, MrOfOtherPeerDoesNotBlockDelete) {
  struct rpma_peer* peer1 = nullptr;
  struct rpma_peer* peer2 = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer1));
  ASSERT_EQ(0, rpma_peer_new(ctx_, &peer2));
  struct rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer1, buf_.data(), buf_.size(), RPMA_MR_USAGE_READ_SRC, &mr));
  EXPECT_EQ(0, rpma_peer_delete(&peer2));
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_EQ(0, rpma_peer_delete(&peer1));
}

}  // namespace
