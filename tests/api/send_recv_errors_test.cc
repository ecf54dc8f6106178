// send_recv_errors_test.cc -- rpma_send, rpma_send_with_imm, rpma_recv: error completions, full
// queues, receiver not ready (RNR), disconnect, order.
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
// Errors
// ---------------------------------------------------------------------------------------------

// The QPs are in the error state: later sends and receives on both sides flush.
void ExpectBothSidesFlush(rpma_conn* client, rpma_cq* client_cq, rpma_conn* server,
                          rpma_cq* server_cq, rpma_mr_local* src, rpma_mr_local* dst) {
  ASSERT_EQ(0, rpma_send(client, src, 0, 4, RPMA_F_COMPLETION_ON_ERROR, Ctx(21)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq, 21, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
  ASSERT_EQ(0, rpma_send_with_imm(client, src, 0, 4, RPMA_F_COMPLETION_ALWAYS, 1, Ctx(22)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq, 22, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
  ASSERT_EQ(0, rpma_recv(client, dst, 0, 4, Ctx(23)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq, 23, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ASSERT_EQ(0, rpma_send(server, src, 0, 4, RPMA_F_COMPLETION_ALWAYS, Ctx(24)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq, 24, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
  ASSERT_EQ(0, rpma_recv(server, dst, 0, 4, Ctx(25)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq, 25, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ExpectNoCompletion(client_cq);
  ExpectNoCompletion(server_cq);
}

// RPMA_F_COMPLETION_ALWAYS: the failed send completes (with its error).
TEST_F(SendRecvTest, MessageLongerThanReceiveErrorsBothSides) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(32, 6);
  Buffer* dst = Register(64, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 16, Ctx(1)));
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(dst, 32, 32, 2, src, 0, 17, 10));

  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 1, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  // The receive posted behind it is flushed.
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(client_cq_, 10, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND, &wc));
  EXPECT_EQ(QpNum(pair_.client), wc.qp_num);
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
  ASSERT_NO_FATAL_FAILURE(
      ExpectBothSidesFlush(pair_.client, client_cq_, pair_.server, server_cq_, src->mr, dst->mr));
}

// RPMA_F_COMPLETION_ON_ERROR: the failed send_with_imm still completes.
TEST_F(SendRecvTest, SendWithImmLongerThanReceiveCompletesOnError) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(32, 6);
  Buffer* dst = Register(32, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(
      0, rpma_send_with_imm(pair_.client, src->mr, 0, 32, RPMA_F_COMPLETION_ON_ERROR, 3, Ctx(10)));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_LOC_LEN_ERR, 10, IBV_WC_REM_INV_REQ_ERR));
  ASSERT_NO_FATAL_FAILURE(
      ExpectBothSidesFlush(pair_.client, client_cq_, pair_.server, server_cq_, src->mr, dst->mr));
}

TEST_F(SendRecvTest, MessageIntoZeroLengthReceiveIsLengthError) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(4, 6);
  ASSERT_EQ(0, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(1)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 1, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_LOC_LEN_ERR, 2, IBV_WC_REM_INV_REQ_ERR));
}

// A receive buffer without local write access (usage SEND only): the responder reports a
// local protection error and NAKs the send (remote operational error on the requester).
TEST_F(SendRecvTest, ReceiveIntoMrWithoutLocalWriteIsProtectionError) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 6);
  Buffer* dst = Register(8, RPMA_MR_USAGE_SEND, 0xEE);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(dst, 0, 8, 1, src, 0, 8, 2));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_LOC_PROT_ERR, 2, IBV_WC_REM_OP_ERR, &wc));
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  EXPECT_EQ(std::vector<uint8_t>(8, 0xEE), dst->bytes);
}

// A source range beyond the local MR fails at the sender (a local error); nothing arrives.
TEST_F(SendRecvTest, SendBeyondLocalMrIsLocalError) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(16, 6);
  Buffer* dst = Register(32, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 32, Ctx(1)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 8, 16, RPMA_F_COMPLETION_ON_ERROR, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(PollOne(client_cq_, &wc));
  EXPECT_EQ(2u, wc.wr_id);
  EXPECT_TRUE(wc.status == IBV_WC_LOC_PROT_ERR || wc.status == IBV_WC_LOC_LEN_ERR) << wc.status;
  EXPECT_EQ(QpNum(pair_.client), wc.qp_num);
  ExpectNoCompletion(server_cq_);
  EXPECT_EQ(std::vector<uint8_t>(32, 0xEE), dst->bytes);
  // The sender's queue pair is in the error state.
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 4, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
  ExpectNoCompletion(server_cq_);
}

// A receive whose range lies partly outside its MR: a message reaching past the MR is a
// protection error at the receiver.
TEST_F(SendRecvTest, ReceiveBeyondMrBoundsIsProtectionError) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(32, 6);
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(dst, 8, 32, 1, src, 0, 12, 2));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_LOC_PROT_ERR, 2, IBV_WC_REM_OP_ERR));
  EXPECT_EQ(std::vector<uint8_t>(16, 0xEE), dst->bytes);
}

// The same receive is fine for a message that stays inside the MR.
TEST_F(SendRecvTest, ReceiveReachingPastMrTakesAShortMessage) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(32, 6);
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(dst, 8, 32, 1, src, 0, 8, 2));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_SUCCESS, 2, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(8u, wc.byte_len);
  EXPECT_EQ(0, memcmp(&dst->bytes[8], src->bytes.data(), 8));
}

// A registered source with length 0 is a 0-byte message too.
TEST_F(SendRecvTest, ZeroLengthSendFromRegisteredMr) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 6);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(0,
            rpma_send_with_imm(pair_.client, src->mr, 4, 0, RPMA_F_COMPLETION_ALWAYS, 6, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_SUCCESS, 2, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(0u, wc.byte_len);
  EXPECT_EQ(6u, ntohl(wc.imm_data));
  EXPECT_EQ(std::vector<uint8_t>(8, 0xEE), dst->bytes);
}

// "RPMA_E_PROVIDER - ibv_post_send(3) failed": the send queue is full (unsignalled sends keep
// their slots until a later signalled completion is polled).
TEST_F(SendRecvTest, SendIntoFullSendQueueIsProvider) {
  rpma_conn_cfg* cfg = NewCfg();
  ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg, 2));
  PairOptions options;
  options.client_cfg = cfg;
  ASSERT_NO_FATAL_FAILURE(ConnectPair(options));
  Buffer* src = Source(8, 6);
  Buffer* dst = Register(32, RPMA_MR_USAGE_RECV, 0xEE);
  for (uintptr_t i = 0; i < 4; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, i * 8, 8, Ctx(i)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, Ctx(10)));
  ASSERT_EQ(
      0, rpma_send_with_imm(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, 1, Ctx(11)));
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(12)));
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_send_with_imm(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 1, Ctx(13)));
  // The two accepted sends arrived; the refused ones did not.
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 0, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 1, IBV_WC_SUCCESS, IBV_WC_RECV));
  ExpectNoCompletion(server_cq_);
  ExpectNoCompletion(client_cq_);
}

// "RPMA_E_PROVIDER" for rpma_recv: the receive queue is full.
TEST_F(SendRecvTest, RecvIntoFullReceiveQueueIsProvider) {
  rpma_conn_cfg* cfg = NewCfg();
  ASSERT_EQ(0, rpma_conn_cfg_set_rq_size(cfg, 2));
  PairOptions options;
  options.server_cfg = cfg;
  ASSERT_NO_FATAL_FAILURE(ConnectPair(options));
  Buffer* dst = Register(32, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(0, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(2)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.server, dst->mr, 8, 8, Ctx(3)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(4)));
  // A consumed receive frees its place.
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(5)));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(1, IBV_WC_SUCCESS, 5, IBV_WC_SUCCESS));
  EXPECT_EQ(0, rpma_recv(pair_.server, dst->mr, 8, 8, Ctx(6)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.server, dst->mr, 16, 8, Ctx(7)));
}

// ---------------------------------------------------------------------------------------------
// Receiver not ready (RNR), disconnect, order
// ---------------------------------------------------------------------------------------------

TEST_F(SendRecvTest, SendWaitsForAReceive) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(12, 8);
  Buffer* dst = Register(12, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 12, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 12, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(2, IBV_WC_SUCCESS, 1, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(12u, wc.byte_len);
  EXPECT_EQ(src->bytes, dst->bytes);
}

// Sends queue behind a waiting one (RC order); each posted receive lets exactly one go on.
TEST_F(SendRecvTest, WaitingSendsGoOnOnePerReceive) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 8);
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 4, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ASSERT_EQ(0,
            rpma_send_with_imm(pair_.client, src->mr, 4, 4, RPMA_F_COMPLETION_ALWAYS, 42, Ctx(2)));
  ExpectNoCompletion(client_cq_);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(11)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(11, IBV_WC_SUCCESS, 1, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(4u, wc.byte_len);
  EXPECT_EQ(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 8, 8, Ctx(12)));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(12, IBV_WC_SUCCESS, 2, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(4u, wc.byte_len);
  EXPECT_NE(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(42u, ntohl(wc.imm_data));
  EXPECT_EQ(0, memcmp(&dst->bytes[0], &src->bytes[0], 4));
  EXPECT_EQ(0, memcmp(&dst->bytes[8], &src->bytes[4], 4));
}

// One side disconnects while the client's send waits for a receive: it is flushed.
// The waiting send uses `flags`: a flush is an error, so it completes with either flag.
void DisconnectFlushesWaitingSend(ConnectedPair* pair, bool client_disconnects, int flags,
                                  rpma_cq* client_cq, rpma_cq* server_cq, rpma_mr_local* src,
                                  rpma_mr_local* dst) {
  ASSERT_EQ(0, rpma_send(pair->client, src, 0, 8, flags, Ctx(1)));
  ExpectNoCompletion(client_cq);
  rpma_conn* first = client_disconnects ? pair->client : pair->server;
  rpma_conn* second = client_disconnects ? pair->server : pair->client;
  ASSERT_EQ(0, rpma_conn_disconnect(first));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(first, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(second, RPMA_CONN_CLOSED));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq, 1, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND, &wc));
  ExpectNoCompletion(client_cq);
  // Nothing was delivered: a receive posted now is flushed, not filled.
  ASSERT_EQ(0, rpma_recv(pair->server, dst, 0, 8, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ExpectNoCompletion(server_cq);
  // Sends posted after the disconnect are flushed too, on both sides.
  ASSERT_EQ(0, rpma_send(pair->client, src, 0, 8, RPMA_F_COMPLETION_ON_ERROR, Ctx(3)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq, 3, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
  ASSERT_EQ(0, rpma_send(pair->server, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(4)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq, 4, IBV_WC_WR_FLUSH_ERR, IBV_WC_SEND));
  ExpectNoCompletion(client_cq);
  ExpectNoCompletion(server_cq);
  ASSERT_EQ(0, rpma_conn_disconnect(second));
  ASSERT_EQ(0, rpma_conn_delete(&pair->client));
  ASSERT_EQ(0, rpma_conn_delete(&pair->server));
}

TEST_F(SendRecvTest, WaitingSendFlushedWhenSenderDisconnects) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 1);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(DisconnectFlushesWaitingSend(&pair_, true, RPMA_F_COMPLETION_ALWAYS,
                                                       client_cq_, server_cq_, src->mr, dst->mr));
  EXPECT_EQ(std::vector<uint8_t>(8, 0xEE), dst->bytes);
}

TEST_F(SendRecvTest, WaitingSendFlushedWhenReceiverDisconnects) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(8, 1);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(DisconnectFlushesWaitingSend(&pair_, false, RPMA_F_COMPLETION_ON_ERROR,
                                                       client_cq_, server_cq_, src->mr, dst->mr));
  EXPECT_EQ(std::vector<uint8_t>(8, 0xEE), dst->bytes);
}

TEST_F(SendRecvTest, ReceivesCompleteInArrivalOrder) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* src = Source(32, 0x40);
  Buffer* dst = Register(96, RPMA_MR_USAGE_RECV, 0xEE);
  for (uintptr_t k = 1; k <= 3; ++k)
    ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, (k - 1) * 32, 32, Ctx(k)));
  // Message k: k + 4 bytes starting at source offset 8 * k.
  for (uintptr_t k = 1; k <= 3; ++k)
    ASSERT_EQ(
        0, rpma_send(pair_.client, src->mr, 8 * k, k + 4, RPMA_F_COMPLETION_ALWAYS, Ctx(100 + k)));
  for (uint64_t k = 1; k <= 3; ++k) {
    SCOPED_TRACE(k);
    ibv_wc wc;
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, k, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
    EXPECT_EQ(k + 4, wc.byte_len);
    std::vector<uint8_t> expected(32, 0xEE);
    memcpy(expected.data(), &src->bytes[8 * k], k + 4);
    EXPECT_EQ(expected,
              std::vector<uint8_t>(dst->bytes.begin() + (k - 1) * 32, dst->bytes.begin() + k * 32));
  }
  for (uint64_t k = 1; k <= 3; ++k)
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 100 + k, IBV_WC_SUCCESS, IBV_WC_SEND));
  ExpectNoCompletion(server_cq_);
  ExpectNoCompletion(client_cq_);
}

// A receive posted on the incoming request, before the accept, takes the first message.
TEST_F(SendRecvTest, ConnReqRecvBeforeAcceptReceivesFirstMessage) {
  ASSERT_NO_FATAL_FAILURE(pair_.Listen());
  Buffer* src = Source(24, 0x11);
  Buffer* dst = Register(64, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(ClientConnect(pair_.peer, pair_.port, nullptr, nullptr, &pair_.client));
  rpma_conn_req* server_req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(pair_.ep, nullptr, &server_req));
  ASSERT_EQ(0, rpma_conn_req_recv(server_req, dst->mr, 16, 24, Ctx(0x5150)));
  ASSERT_EQ(0, rpma_conn_req_recv(server_req, dst->mr, 40, 24, nullptr));
  ASSERT_EQ(0, rpma_conn_req_connect(&server_req, nullptr, &pair_.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_ESTABLISHED));
  client_cq_ = MainCq(pair_.client);
  server_cq_ = MainCq(pair_.server);

  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 24, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(0x5150, IBV_WC_SUCCESS, 1, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(24u, wc.byte_len);
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(0, IBV_WC_SUCCESS, 2, IBV_WC_SUCCESS, &wc));
  EXPECT_EQ(8u, wc.byte_len);

  std::vector<uint8_t> expected(64, 0xEE);
  memcpy(&expected[16], src->bytes.data(), 24);
  memcpy(&expected[40], src->bytes.data(), 8);
  EXPECT_EQ(expected, dst->bytes);
}

}  // namespace
