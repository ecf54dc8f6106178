// rcq_srq_test.cc -- where receive completions go: the connection's RCQ, a shared receive queue and
// its own RCQ.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <librpma.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "tests/common/test_support.h"

namespace {

class RcqSrqTest : public PairFixture {
 protected:
  // A server cfg with `rcq_size` (and the SRQ if one was made).
  rpma_conn_cfg* NewCfg(uint32_t rcq_size) {
    rpma_conn_cfg* cfg = PairFixture::NewCfg();
    EXPECT_EQ(0, rpma_conn_cfg_set_rcq_size(cfg, rcq_size));
    if (srq_ != nullptr) {
      EXPECT_EQ(0, rpma_conn_cfg_set_srq(cfg, srq_));
    }
    return cfg;
  }

  void MakeSrq(uint32_t rq_size, uint32_t rcq_size) {
    ASSERT_NO_FATAL_FAILURE(pair_.Listen());
    rpma_srq_cfg* srq_cfg = nullptr;
    ASSERT_EQ(0, rpma_srq_cfg_new(&srq_cfg));
    ASSERT_EQ(0, rpma_srq_cfg_set_rq_size(srq_cfg, rq_size));
    ASSERT_EQ(0, rpma_srq_cfg_set_rcq_size(srq_cfg, rcq_size));
    ASSERT_EQ(0, rpma_srq_new(pair_.peer, srq_cfg, &srq_));
    ASSERT_EQ(0, rpma_srq_cfg_delete(&srq_cfg));
    ASSERT_NE(nullptr, srq_);
  }

  // Connects pair_ (the client with default cfg, the server with `server_cfg`).
  void Connect(const rpma_conn_cfg* server_cfg, const rpma_conn_cfg* client_cfg = nullptr) {
    PairOptions options;
    options.server_cfg = server_cfg;
    options.client_cfg = client_cfg;
    ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
  }

  // A second connection to the same endpoint.
  void ConnectSecond(const rpma_conn_cfg* server_cfg) {
    PairOptions options;
    options.server_cfg = server_cfg;
    ASSERT_NO_FATAL_FAILURE(
        ConnectOnce(pair_.peer, pair_.ep, pair_.port, options, &client2_, &server2_));
  }

  Buffer* Source(size_t size, uint8_t seed) { return PairFixture::Source(size, seed, 13); }

  void TearDown() override {
    CloseConnections(&client2_, &server2_);
    PairFixture::TearDown();
  }

  void ReleaseMore() override {
    if (srq_ != nullptr) {
      EXPECT_EQ(0, rpma_srq_delete(&srq_));
    }
  }

  rpma_conn* client2_ = nullptr;
  rpma_conn* server2_ = nullptr;
  rpma_srq* srq_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// The connection's receive CQ
// ---------------------------------------------------------------------------------------------

TEST_F(RcqSrqTest, WithoutRcqReceivesGoToTheMainCq) {
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(0)));
  EXPECT_EQ(nullptr, Rcq(pair_.server));
  Buffer* src = Source(8, 1);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.server), 1, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 2, IBV_WC_SUCCESS, IBV_WC_SEND));
  EXPECT_EQ(src->bytes, dst->bytes);
}

TEST_F(RcqSrqTest, RcqGetsReceivesAndMainCqOnlySends) {
  rpma_conn_cfg* cfg = NewCfg(4);
  ASSERT_NO_FATAL_FAILURE(Connect(cfg, cfg));
  for (rpma_conn* conn : {pair_.client, pair_.server}) {
    rpma_cq* rcq = Rcq(conn);
    ASSERT_NE(nullptr, rcq);
    EXPECT_NE(MainCq(conn), rcq);
  }
  rpma_cq* server_cq = MainCq(pair_.server);
  rpma_cq* server_rcq = Rcq(pair_.server);
  rpma_cq* client_cq = MainCq(pair_.client);
  rpma_cq* client_rcq = Rcq(pair_.client);
  Buffer* src = Source(16, 2);
  Buffer* server_dst = Register(32, RPMA_MR_USAGE_RECV, 0xEE);
  Buffer* client_dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);

  // client -> server: a send and a send_with_imm.
  ASSERT_EQ(0, rpma_recv(pair_.server, server_dst->mr, 0, 16, Ctx(1)));
  ASSERT_EQ(0, rpma_recv(pair_.server, server_dst->mr, 16, 16, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 16, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ASSERT_EQ(
      0, rpma_send_with_imm(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 0x77, Ctx(4)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(16u, wc.byte_len);
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(8u, wc.byte_len);
  EXPECT_NE(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(0x77u, ntohl(wc.imm_data));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq, 3, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq, 4, IBV_WC_SUCCESS, IBV_WC_SEND));
  ExpectNoCompletion(server_cq);
  ExpectNoCompletion(client_rcq);

  // server -> client.
  ASSERT_EQ(0, rpma_recv(pair_.client, client_dst->mr, 0, 16, Ctx(5)));
  ASSERT_EQ(0, rpma_send(pair_.server, src->mr, 0, 16, RPMA_F_COMPLETION_ALWAYS, Ctx(6)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_rcq, 5, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq, 6, IBV_WC_SUCCESS, IBV_WC_SEND));
  ExpectNoCompletion(server_cq);
  ExpectNoCompletion(server_rcq);
  ExpectNoCompletion(client_cq);
  ExpectNoCompletion(client_rcq);

  EXPECT_EQ(0, memcmp(server_dst->bytes.data(), src->bytes.data(), 16));
  EXPECT_EQ(0, memcmp(&server_dst->bytes[16], src->bytes.data(), 8));
  EXPECT_EQ(src->bytes, client_dst->bytes);
}

// Failed receives are receive completions too: a flushed receive lands on the RCQ.
TEST_F(RcqSrqTest, FlushedReceivesGoToTheRcq) {
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(4)));
  rpma_cq* server_cq = MainCq(pair_.server);
  rpma_cq* server_rcq = Rcq(pair_.server);
  ASSERT_NE(nullptr, server_rcq);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_rcq, 1, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_rcq, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ExpectNoCompletion(server_cq);
  ExpectNoCompletion(server_rcq);
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.server));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.client));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.server));
}

// ---------------------------------------------------------------------------------------------
// Shared receive queue
// ---------------------------------------------------------------------------------------------

// Two connections take their messages from one set of SRQ buffers; wc.qp_num says which
// connection received, wc.wr_id which buffer was filled.
TEST_F(RcqSrqTest, SrqBuffersAreSharedByTwoConnections) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  rpma_conn_cfg* cfg = NewCfg(0);
  ASSERT_NO_FATAL_FAILURE(Connect(cfg));
  ASSERT_NO_FATAL_FAILURE(ConnectSecond(cfg));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ASSERT_NE(nullptr, srq_rcq);
  const uint32_t qp1 = QpNum(pair_.server);
  const uint32_t qp2 = QpNum(server2_);
  ASSERT_NE(qp1, qp2);

  Buffer* src1 = Source(16, 0x10);
  Buffer* src2 = Source(16, 0x90);
  Buffer* dst = Register(4 * 16, RPMA_MR_USAGE_RECV, 0xEE);
  for (uintptr_t slot = 0; slot < 4; ++slot)
    ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, slot * 16, 16, Ctx(100 + slot)));
  // Each connection sends two messages: 10 and 11 bytes over connection 1, 12 and 13 over 2.
  ASSERT_EQ(0, rpma_send(pair_.client, src1->mr, 0, 10, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ASSERT_EQ(0, rpma_send(client2_, src2->mr, 0, 12, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.client, src1->mr, 0, 11, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ASSERT_EQ(0, rpma_send(client2_, src2->mr, 0, 13, RPMA_F_COMPLETION_ALWAYS, Ctx(4)));

  std::vector<bool> slot_used(4, false);
  std::vector<uint32_t> lengths_on_qp1;
  std::vector<uint32_t> lengths_on_qp2;
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    ibv_wc wc;
    ASSERT_NO_FATAL_FAILURE(PollOne(srq_rcq, &wc));
    ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(IBV_WC_RECV, wc.opcode);
    ASSERT_GE(wc.wr_id, 100u);
    ASSERT_LT(wc.wr_id, 104u);
    size_t slot = wc.wr_id - 100;
    EXPECT_FALSE(slot_used[slot]) << "buffer " << slot << " filled twice";
    slot_used[slot] = true;
    ASSERT_TRUE(wc.qp_num == qp1 || wc.qp_num == qp2) << wc.qp_num;
    const Buffer* src = wc.qp_num == qp1 ? src1 : src2;
    (wc.qp_num == qp1 ? lengths_on_qp1 : lengths_on_qp2).push_back(wc.byte_len);
    std::vector<uint8_t> expected(16, 0xEE);
    memcpy(expected.data(), src->bytes.data(), wc.byte_len);
    EXPECT_EQ(expected, std::vector<uint8_t>(dst->bytes.begin() + slot * 16,
                                             dst->bytes.begin() + (slot + 1) * 16));
  }
  EXPECT_EQ((std::vector<uint32_t>{10, 11}), lengths_on_qp1);
  EXPECT_EQ((std::vector<uint32_t>{12, 13}), lengths_on_qp2);
  ExpectNoCompletion(srq_rcq);
  for (rpma_conn* server : {pair_.server, server2_}) ExpectNoCompletion(MainCq(server));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 1, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 3, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2_), 2, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2_), 4, IBV_WC_SUCCESS, IBV_WC_SEND));
}

// The SRQ's own RCQ wins even over a connection RCQ; rpma_conn_get_rcq then returns NULL.
TEST_F(RcqSrqTest, SrqRcqGetsReceivesAndConnHasNoRcq) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(0)));
  ASSERT_NO_FATAL_FAILURE(ConnectSecond(NewCfg(4)));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ASSERT_NE(nullptr, srq_rcq);
  EXPECT_EQ(nullptr, Rcq(pair_.server));
  EXPECT_EQ(nullptr, Rcq(server2_));

  Buffer* src = Source(8, 3);
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 8, 8, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_EQ(0, rpma_send(client2_, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(4)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(server2_), wc.qp_num);
  ExpectNoCompletion(MainCq(pair_.server));
  ExpectNoCompletion(MainCq(server2_));
  ExpectNoCompletion(srq_rcq);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 3, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2_), 4, IBV_WC_SUCCESS, IBV_WC_SEND));
}

TEST_F(RcqSrqTest, SrqWithoutRcqUsesTheConnRcq) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 0));
  rpma_cq* srq_rcq = reinterpret_cast<rpma_cq*>(uintptr_t{1});
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  EXPECT_EQ(nullptr, srq_rcq);
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(4)));
  rpma_cq* rcq = Rcq(pair_.server);
  ASSERT_NE(nullptr, rcq);
  Buffer* src = Source(8, 3);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(8u, wc.byte_len);
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ExpectNoCompletion(MainCq(pair_.server));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 2, IBV_WC_SUCCESS, IBV_WC_SEND));
  EXPECT_EQ(src->bytes, dst->bytes);
}

TEST_F(RcqSrqTest, SrqWithoutRcqAndNoConnRcqUsesTheMainCq) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 0));
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(0)));
  EXPECT_EQ(nullptr, Rcq(pair_.server));
  Buffer* src = Source(8, 3);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 0, 8, Ctx(1)));
  ASSERT_EQ(0,
            rpma_send_with_imm(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, 9, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(MainCq(pair_.server), 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(8u, wc.byte_len);
  EXPECT_NE(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(9u, ntohl(wc.imm_data));
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 2, IBV_WC_SUCCESS, IBV_WC_SEND));
  EXPECT_EQ(src->bytes, dst->bytes);
}

TEST_F(RcqSrqTest, RecvOnConnWithSrqIsProvider) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(0)));
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.server, dst->mr, 0, 8, Ctx(1)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(2)));
  // The refused receives were not posted anywhere: a message waits for an SRQ buffer.
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ExpectNoCompletion(srq_rcq);
  ExpectNoCompletion(MainCq(pair_.server));
  ExpectNoCompletion(MainCq(pair_.client));
  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 0, 8, Ctx(4)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 4, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(0u, wc.byte_len);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 3, IBV_WC_SUCCESS, IBV_WC_SEND));
}

TEST_F(RcqSrqTest, ConnReqRecvWithSrqIsProvider) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  rpma_conn_cfg* cfg = NewCfg(0);
  Buffer* dst = Register(8, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_NO_FATAL_FAILURE(ClientConnect(pair_.peer, pair_.port, nullptr, nullptr, &pair_.client));
  rpma_conn_req* server_req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(pair_.ep, cfg, &server_req));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_recv(server_req, dst->mr, 0, 8, Ctx(1)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_recv(server_req, dst->mr, 0, 8, nullptr));
  ASSERT_EQ(0, rpma_conn_req_connect(&server_req, nullptr, &pair_.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_ESTABLISHED));
  // Nothing was posted: the first message waits for an SRQ buffer.
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ExpectNoCompletion(MainCq(pair_.client));
  ASSERT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, Ctx(3)));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 3, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 2, IBV_WC_SUCCESS, IBV_WC_SEND));
}

TEST_F(RcqSrqTest, SrqRecvBeyondRqSizeIsProvider) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(3, 8));
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(0)));
  Buffer* dst = Register(32, RPMA_MR_USAGE_RECV, 0xEE);
  for (uintptr_t i = 0; i < 3; ++i) ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, i * 8, 8, Ctx(i)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, dst->mr, 24, 8, Ctx(3)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, nullptr, 0, 0, Ctx(4)));
  // A consumed buffer frees its place.
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(5)));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 0, IBV_WC_SUCCESS, IBV_WC_RECV));
  EXPECT_EQ(0, rpma_srq_recv(srq_, dst->mr, 24, 8, Ctx(6)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_srq_recv(srq_, dst->mr, 24, 8, Ctx(7)));
}

// A message to a connection whose SRQ is empty waits until rpma_srq_recv posts a buffer.
TEST_F(RcqSrqTest, SendWaitsForAnSrqBuffer) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  rpma_conn_cfg* cfg = NewCfg(0);
  ASSERT_NO_FATAL_FAILURE(Connect(cfg));
  ASSERT_NO_FATAL_FAILURE(ConnectSecond(cfg));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  Buffer* src = Source(8, 3);
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_send(client2_, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(MainCq(client2_));
  ExpectNoCompletion(srq_rcq);
  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 8, 8, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(server2_), wc.qp_num);
  EXPECT_EQ(8u, wc.byte_len);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2_), 1, IBV_WC_SUCCESS, IBV_WC_SEND));
  EXPECT_EQ(0, memcmp(&dst->bytes[8], src->bytes.data(), 8));
  ExpectNoCompletion(MainCq(pair_.client));
}

// Senders on two connections wait for SRQ buffers; each buffer posted lets exactly one go on.
TEST_F(RcqSrqTest, WaitingSendersOnTwoConnectionsShareSrqBuffers) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  rpma_conn_cfg* cfg = NewCfg(0);
  ASSERT_NO_FATAL_FAILURE(Connect(cfg));
  ASSERT_NO_FATAL_FAILURE(ConnectSecond(cfg));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  Buffer* src = Source(8, 3);
  Buffer* dst = Register(16, RPMA_MR_USAGE_RECV, 0xEE);
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 3, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ASSERT_EQ(0, rpma_send(client2_, src->mr, 0, 5, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ExpectNoCompletion(srq_rcq);

  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 0, 8, Ctx(11)));
  ibv_wc first;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 11, IBV_WC_SUCCESS, IBV_WC_RECV, &first));
  ExpectNoCompletion(srq_rcq);
  const bool first_is_conn1 = first.qp_num == QpNum(pair_.server);
  EXPECT_TRUE(first_is_conn1 || first.qp_num == QpNum(server2_)) << first.qp_num;
  EXPECT_EQ(first_is_conn1 ? 3u : 5u, first.byte_len);
  rpma_conn* first_client = first_is_conn1 ? pair_.client : client2_;
  rpma_conn* other_client = first_is_conn1 ? client2_ : pair_.client;
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(MainCq(first_client), first_is_conn1 ? 1 : 2, IBV_WC_SUCCESS, IBV_WC_SEND));
  ExpectNoCompletion(MainCq(other_client));

  ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, 8, 8, Ctx(12)));
  ibv_wc second;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 12, IBV_WC_SUCCESS, IBV_WC_RECV, &second));
  EXPECT_EQ(QpNum(first_is_conn1 ? server2_ : pair_.server), second.qp_num);
  EXPECT_EQ(first_is_conn1 ? 5u : 3u, second.byte_len);
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(MainCq(other_client), first_is_conn1 ? 2 : 1, IBV_WC_SUCCESS, IBV_WC_SEND));
  ExpectNoCompletion(srq_rcq);
}

// The SRQ's RCQ has its own completion channel: armed at creation, one event per arm.
TEST_F(RcqSrqTest, SrqRcqChannelSignals) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(0)));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ASSERT_NE(nullptr, srq_rcq);
  int fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(srq_rcq, &fd));
  int main_fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(MainCq(pair_.server), &main_fd));
  EXPECT_NE(main_fd, fd);
  EXPECT_FALSE(IsReadableNow(fd));
  ASSERT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, Ctx(1)));
  ASSERT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  EXPECT_FALSE(IsReadableNow(main_fd));
  ASSERT_EQ(0, rpma_cq_wait(srq_rcq));
  EXPECT_FALSE(IsReadableNow(fd));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_EQ(0, rpma_send(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(4)));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  ASSERT_EQ(0, rpma_cq_wait(srq_rcq));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 3, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 4, IBV_WC_SUCCESS, IBV_WC_SEND));
}

// SRQ buffers belong to no queue pair: one connection's error or disconnect flushes none of
// them, and the other connection keeps receiving into them.
TEST_F(RcqSrqTest, SrqBuffersSurviveAnotherConnectionsErrorAndDisconnect) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  rpma_conn_cfg* cfg = NewCfg(0);
  ASSERT_NO_FATAL_FAILURE(Connect(cfg));
  ASSERT_NO_FATAL_FAILURE(ConnectSecond(cfg));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  Buffer* src = Source(16, 3);
  Buffer* dst = Register(24, RPMA_MR_USAGE_RECV, 0xEE);
  for (uintptr_t slot = 0; slot < 3; ++slot)
    ASSERT_EQ(0, rpma_srq_recv(srq_, dst->mr, slot * 8, 8, Ctx(slot)));

  // Connection 1: a message too long for the buffer errors both of its queue pairs.
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 16, RPMA_F_COMPLETION_ALWAYS, Ctx(10)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 0, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(MainCq(pair_.client), 10, IBV_WC_REM_INV_REQ_ERR, IBV_WC_SEND));
  ExpectNoCompletion(srq_rcq);

  // Connection 2 still finds the other buffers.
  ASSERT_EQ(0, rpma_send(client2_, src->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(11)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(server2_), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2_), 11, IBV_WC_SUCCESS, IBV_WC_SEND));

  // Connection 1 goes away: still nothing flushed.
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&pair_.client, &pair_.server));
  ExpectNoCompletion(srq_rcq);
  ASSERT_EQ(0, rpma_send(client2_, src->mr, 8, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(12)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 2, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(QpNum(server2_), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(client2_), 12, IBV_WC_SUCCESS, IBV_WC_SEND));
  EXPECT_EQ(0, memcmp(&dst->bytes[8], src->bytes.data(), 8));
  EXPECT_EQ(0, memcmp(&dst->bytes[16], &src->bytes[8], 8));
}

// 0-length SRQ buffers (dst NULL) take 0-byte messages.
TEST_F(RcqSrqTest, ZeroLengthSrqReceive) {
  ASSERT_NO_FATAL_FAILURE(MakeSrq(8, 8));
  ASSERT_NO_FATAL_FAILURE(Connect(NewCfg(0)));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ASSERT_EQ(0, rpma_srq_recv(srq_, nullptr, 0, 0, Ctx(1)));
  ASSERT_EQ(
      0, rpma_send_with_imm(pair_.client, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, 0xBEEF, Ctx(2)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(srq_rcq, 1, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
  EXPECT_EQ(0u, wc.byte_len);
  EXPECT_NE(0u, wc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(0xBEEFu, ntohl(wc.imm_data));
  EXPECT_EQ(QpNum(pair_.server), wc.qp_num);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair_.client), 2, IBV_WC_SUCCESS, IBV_WC_SEND));
}

}  // namespace
