// error_state_test.cc -- after an error completion the queue pair (and, for remote errors, the
// target's too) is in the error state: everything outstanding and later completes with
// IBV_WC_WR_FLUSH_ERR.
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
// The error state

TEST_F(AccessErrorTest, EverythingPostedAfterAnErrorIsFlushed) {
  ASSERT_NO_FATAL_FAILURE(
      Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
            kLocalUsage | RPMA_MR_USAGE_SEND));
  ASSERT_NO_FATAL_FAILURE(FailClientWithRemoteAccessError(Ctx(0x500)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, IBV_WC_REM_ACCESS_ERR, Ctx(0x500), client_qp_num_));

  // Valid work requests of every kind, signalled or not: posting succeeds, all flush.
  const char value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0x501)));
  EXPECT_EQ(0, rpma_write(pair_.client, remote_, 64, local_mr_, 64, 64, RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(0x502)));
  EXPECT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0x503)));
  EXPECT_EQ(0, rpma_read(pair_.client, local_mr_, 64, remote_, 64, 64, RPMA_F_COMPLETION_ON_ERROR,
                         Ctx(0x504)));
  EXPECT_EQ(
      0, rpma_write(pair_.client, nullptr, 0, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(0x505)));
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
  rpma_mr_local* recv_mr = nullptr;
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
  rpma_mr_local* recv_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(&recv_byte, 1, RPMA_MR_USAGE_RECV, &recv_mr));
  ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 1, Ctx(0x551)));
  // SEND | WRITE_SRC grants LOCAL_WRITE (WRITE_SRC), so use a SEND-only region to fail locally.
  rpma_mr_local* send_only = nullptr;
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
  rpma_mr_local* recv_mr = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(recv_buf, sizeof(recv_buf), RPMA_MR_USAGE_RECV, &recv_mr));
  ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 1, Ctx(0x531)));
  ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 1, 1, Ctx(0x532)));

  if (GetParam() == Dir::kWrite) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, kSize, local_mr_, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                            Ctx(0x530)));
  } else {
    ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, kSize, 8, RPMA_F_COMPLETION_ALWAYS,
                           Ctx(0x530)));
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
  rpma_mr_local* ct_mr = nullptr;
  rpma_mr_remote* ct_remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(Register(client_target.region(), kSize, RPMA_MR_USAGE_WRITE_DST, &ct_mr));
  ASSERT_NO_FATAL_FAILURE(RemoteOf(ct_mr, &ct_remote));
  EXPECT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 1, Ctx(0x533)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(server_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x533), server_qp_num_));
  EXPECT_EQ(0, rpma_write(pair_.server, ct_remote, 0, target_mr_, 0, 64, RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(0x534)));
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(server_cq_, IBV_WC_WR_FLUSH_ERR, Ctx(0x534), server_qp_num_));
  ExpectNoCompletion(server_cq_);
  EXPECT_TRUE(client_target.RegionIs(kInitial));
  EXPECT_EQ(0x11, recv_buf[0]);
  EXPECT_EQ(0x22, recv_buf[1]);
}

INSTANTIATE_TEST_SUITE_P(Dirs, RemoteErrorStateTest, ::testing::Values(Dir::kWrite, Dir::kRead),
                         [](const ::testing::TestParamInfo<Dir>& info) {
                           return std::string(info.param == Dir::kWrite ? "Write" : "Read");
                         });

TEST_F(AccessErrorTest, UnsignalledFailureStillCompletesAndLaterUnsignalledFlush) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, kLocalUsage));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, kSize, local_mr_, 0, 8, RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(0x541)));
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
