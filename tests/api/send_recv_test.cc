// send_recv_test.cc -- rpma_send, rpma_send_with_imm, rpma_recv: argument checks, bytes,
// completions, imm, 0-byte (errors and RNR: send_recv_errors_test.cc).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <librpma.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/common/test_support.h"

namespace {

// One established pair (ConnectPair); its buffers and configurations go in TearDown.
class SendRecvTest : public PairFixture {};

// ---------------------------------------------------------------------------------------------
// Argument checks
// ---------------------------------------------------------------------------------------------

TEST_F(SendRecvTest, SendNullConnIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 1);
  EXPECT_EQ(RPMA_E_INVAL, rpma_send(nullptr, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_send(nullptr, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
}

TEST_F(SendRecvTest, SendZeroFlagsIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 1);
  EXPECT_EQ(RPMA_E_INVAL, rpma_send(pair_.client, src->mr, 0, 8, 0, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_send(pair_.client, nullptr, 0, 0, 0, Ctx(1)));
}

TEST_F(SendRecvTest, SendNullSrcWithOffsetIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(RPMA_E_INVAL, rpma_send(pair_.client, nullptr, 1, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
}

TEST_F(SendRecvTest, SendNullSrcWithLenIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(RPMA_E_INVAL, rpma_send(pair_.client, nullptr, 0, 1, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_send(pair_.client, nullptr, 4, 8, RPMA_F_COMPLETION_ON_ERROR, Ctx(1)));
}

TEST_F(SendRecvTest, SendWithImmNullConnIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 1);
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_send_with_imm(nullptr, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 7, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_send_with_imm(nullptr, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, 7, Ctx(1)));
}

TEST_F(SendRecvTest, SendWithImmZeroFlagsIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 1);
  EXPECT_EQ(RPMA_E_INVAL, rpma_send_with_imm(pair_.client, src->mr, 0, 8, 0, 7, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_send_with_imm(pair_.client, nullptr, 0, 0, 0, 7, Ctx(1)));
}

TEST_F(SendRecvTest, SendWithImmNullSrcWithOffsetIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_send_with_imm(pair_.client, nullptr, 1, 0, RPMA_F_COMPLETION_ALWAYS, 7, Ctx(1)));
}

TEST_F(SendRecvTest, SendWithImmNullSrcWithLenIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_send_with_imm(pair_.client, nullptr, 0, 1, RPMA_F_COMPLETION_ALWAYS, 7, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_send_with_imm(pair_.client, nullptr, 4, 8, RPMA_F_COMPLETION_ON_ERROR, 7, Ctx(1)));
}

TEST_F(SendRecvTest, RecvNullConnIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0);
  EXPECT_EQ(RPMA_E_INVAL, rpma_recv(nullptr, dst->mr, 0, 8, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_recv(nullptr, nullptr, 0, 0, Ctx(1)));
}

TEST_F(SendRecvTest, RecvNullDstWithOffsetIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(RPMA_E_INVAL, rpma_recv(pair_.server, nullptr, 1, 0, Ctx(1)));
}

TEST_F(SendRecvTest, RecvNullDstWithLenIsInval) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(RPMA_E_INVAL, rpma_recv(pair_.server, nullptr, 0, 1, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_recv(pair_.server, nullptr, 4, 8, nullptr));
}

// Rejected calls post nothing: no completion, no receive consumed, no receive posted.
TEST_F(SendRecvTest, InvalidCallsPostNothing) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 1);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(5)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_send(pair_.client, src->mr, 0, 8, 0, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_send_with_imm(pair_.client, src->mr, 0, 8, 0, 9, Ctx(2)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_recv(pair_.server, nullptr, 0, 8, Ctx(3)));
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
  EXPECT_EQ(std::vector<uint8_t>(8, 0xEE), dst->bytes);

  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(4)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 4, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 5, IBV_WC_SUCCESS, IBV_WC_RECV));
  EXPECT_EQ(src->bytes, dst->bytes);
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
}

// ---------------------------------------------------------------------------------------------
// Delivery and completions
// ---------------------------------------------------------------------------------------------

TEST_F(SendRecvTest, SendDeliversExactBytesAtReceiveOffset) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(64, 3);
  Buffer* dst = Register(256, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(dst, 100, 50, 0xABC, src, 7, 40, 0x123));

  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 0xABC, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(40u, wc.byte_len);
  EXPECT_EQ(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 0x123, IBV_WC_SUCCESS, IBV_WC_SEND, &wc));
  EXPECT_EQ(QpNum(pair_.client), wc.qp_num);

  std::vector<uint8_t> expected(256, 0xEE);
  memcpy(&expected[100], &src->bytes[7], 40);
  EXPECT_EQ(expected, dst->bytes);
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
}

TEST_F(SendRecvTest, ServerToClientSend) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(32, 9);
  Buffer* dst = Register(32, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.client, dst->mr, 0, 32, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.server, src->mr, 0, 32, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(32u, wc.byte_len);
  EXPECT_EQ(QpNum(pair_.client), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 1, IBV_WC_SUCCESS, IBV_WC_SEND));
  EXPECT_EQ(src->bytes, dst->bytes);
}

TEST_F(SendRecvTest, SendWithImmDeliversBytesAndImmediateInNetworkOrder) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(16, 5);
  Buffer* dst = Register(64, RPMA_MR_USAGE_RECV, 0xEE);
  const uint32_t imm = 0x12345678;
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 8, 32, Ctx(77)));
  ASSERT_EQ(
      0, rpma_send_with_imm(pair_.client, src->mr, 0, 16, RPMA_F_COMPLETION_ALWAYS, imm, Ctx(66)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(77, IBV_WC_SUCCESS, 66, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(16u, wc.byte_len);
  EXPECT_NE(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(imm, ntohl(wc.imm_data));
  EXPECT_EQ(htonl(imm), wc.imm_data);
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);

  std::vector<uint8_t> expected(64, 0xEE);
  memcpy(&expected[8], src->bytes.data(), 16);
  EXPECT_EQ(expected, dst->bytes);
}

// An immediate value whose bytes all differ, and the extremes, each survive the trip.
TEST_F(SendRecvTest, SendWithImmCarriesEveryValue) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0);
  const uint32_t values[] = {0u, 1u, 0xFFFFFFFFu, 0x80000001u, 0xA1B2C3D4u};
  for (uint32_t imm : values) {
    SCOPED_TRACE(imm);
    ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(1)));
    ASSERT_EQ(
        0, rpma_send_with_imm(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, imm, Ctx(2)));
    ibv_wc wc;
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
    EXPECT_NE(0u, wc.wc_flags & IBV_WC_WITH_IMM);
    EXPECT_EQ(imm, ntohl(wc.imm_data));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_SUCCESS, IBV_WC_SEND));
  }
}

TEST_F(SendRecvTest, NullOpContextGivesWrIdZero) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(4, 1);
  Buffer* dst = Register(4, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 4, nullptr));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 4, RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(0, IBV_WC_SUCCESS, 0, IBV_WC_SUCCESS));
  EXPECT_EQ(src->bytes, dst->bytes);
}

// A receive buffer exactly as long as the message is enough.
TEST_F(SendRecvTest, MessageExactlyFillingTheReceive) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(16, 2);
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(dst, 0, 16, 1, src, 0, 16, 2));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_SUCCESS, 2, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(16u, wc.byte_len);
  EXPECT_EQ(src->bytes, dst->bytes);
}

// RPMA_F_COMPLETION_ON_ERROR: a successful send produces no sender completion.
TEST_F(SendRecvTest, OnErrorSuccessfulSendsHaveNoSenderCompletion) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 4);
  Buffer* dst = Register(24, RPMA_MR_USAGE_RECV, 0xEE);
  for (uintptr_t i = 0; i < 3; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, i * 8, 8, Ctx(10 + i)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, Ctx(1)));
  ASSERT_EQ(0,
            rpma_send_with_imm(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, 5, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 10, IBV_WC_SUCCESS, IBV_WC_RECV));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 11, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(5u, ntohl(wc.imm_data));
  ExpectNoCompletion(client_cq_);
  // A later signalled send completes alone.
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(12, IBV_WC_SUCCESS, 3, IBV_WC_SUCCESS));
  ExpectNoCompletion(client_cq_);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(0, memcmp(&dst->bytes[i * 8], src->bytes.data(), 8)) << "message " << i;
}

// ---------------------------------------------------------------------------------------------
// 0-byte messages and 0-length receives
// ---------------------------------------------------------------------------------------------

TEST_F(SendRecvTest, ZeroByteSendConsumesAReceive) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 16, Ctx(1)));
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 16, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_SUCCESS, 3, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(0u, wc.byte_len);
  EXPECT_EQ(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(std::vector<uint8_t>(16, 0xEE), dst->bytes);
  // Exactly one receive was consumed: the second is still posted.
  ExpectNoCompletion(server_cq_);
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(4)));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(2, IBV_WC_SUCCESS, 4, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(0u, wc.byte_len);
}

TEST_F(SendRecvTest, ZeroByteSendWithImm) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 4, 8, Ctx(1)));
  ASSERT_EQ(0, rpma_send_with_imm(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, 0xCAFEBABE,
                                  Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_SUCCESS, 2, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(0u, wc.byte_len);
  EXPECT_NE(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(0xCAFEBABEu, ntohl(wc.imm_data));
  EXPECT_EQ(std::vector<uint8_t>(16, 0xEE), dst->bytes);
}

TEST_F(SendRecvTest, ZeroLengthReceiveTakesZeroByteMessage) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  ASSERT_EQ(0, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(8)));
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(9)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(8, IBV_WC_SUCCESS, 9, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(0u, wc.byte_len);
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
}

// A 0-byte message also fits a registered receive of length 0.
TEST_F(SendRecvTest, ZeroByteMessageIntoZeroLengthRegisteredReceive) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 3, 0, Ctx(1)));
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_SUCCESS, 2, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(0u, wc.byte_len);
  EXPECT_EQ(std::vector<uint8_t>(8, 0xEE), dst->bytes);
}

}  // namespace
