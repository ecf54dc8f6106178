// sq_depth_test.cc -- send/receive queue depths: sq_size unsignalled work requests hold their slots
// until a signalled completion is polled; posting past sq_size / rq_size returns RPMA_E_PROVIDER.
#include <librpma.h>
#include <string.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kSize = 4096;

class SqDepthTest : public PairFixture {
 protected:
  // Connects with the given client cfg (NULL: defaults) and registers a target on the server
  // side (write, read and flush allowed) and a local buffer on the client side.
  void Setup(const rpma_conn_cfg* client_cfg = nullptr) {
    PairOptions options;
    options.client_cfg = client_cfg;
    ASSERT_NO_FATAL_FAILURE(ConnectPair(options));
    target_.assign(kSize, 0);
    local_.assign(kSize, 0x5C);
    ASSERT_NO_FATAL_FAILURE(regs_.Register(pair_.peer, target_.data(), kSize,
                                           RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
                                               RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY |
                                               RPMA_MR_USAGE_SEND,
                                           &target_mr_));
    ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(target_mr_, &remote_));
    ASSERT_NO_FATAL_FAILURE(regs_.Register(
        pair_.peer, local_.data(), kSize,
        RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV,
        &local_mr_));
  }

  // An 8-byte write to slot `i` of the target.
  int Write(uintptr_t i, int flags) {
    return rpma_write(pair_.client, remote_, 8 * i, local_mr_, 0, 8, flags, Ctx(i));
  }

  // Every kind of send-queue work request is refused while the send queue is full, and the
  // refused ones leave no completion behind.
  void ExpectEveryPostRefused() {
    const char value[8] = {};
    const int flags = RPMA_F_COMPLETION_ALWAYS;
    EXPECT_EQ(RPMA_E_PROVIDER, Write(900, flags));
    EXPECT_EQ(RPMA_E_PROVIDER, Write(901, RPMA_F_COMPLETION_ON_ERROR));
    EXPECT_EQ(RPMA_E_PROVIDER, rpma_write(pair_.client, nullptr, 0, nullptr, 0, 0, flags, Ctx(1)));
    EXPECT_EQ(RPMA_E_PROVIDER, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 8, flags, Ctx(2)));
    EXPECT_EQ(RPMA_E_PROVIDER,
              rpma_write_with_imm(pair_.client, remote_, 0, local_mr_, 0, 8, flags, 1, Ctx(3)));
    EXPECT_EQ(RPMA_E_PROVIDER, rpma_atomic_write(pair_.client, remote_, 0, value, flags, Ctx(4)));
    EXPECT_EQ(RPMA_E_PROVIDER,
              rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, flags, Ctx(5)));
    EXPECT_EQ(RPMA_E_PROVIDER, rpma_send(pair_.client, local_mr_, 0, 8, flags, Ctx(6)));
    EXPECT_EQ(RPMA_E_PROVIDER, rpma_send_with_imm(pair_.client, nullptr, 0, 0, flags, 7, Ctx(7)));
    ExpectNoCompletion(client_cq_);
  }

  rpma_conn_cfg* cfg_ = nullptr;
  std::vector<uint8_t> target_;
  std::vector<uint8_t> local_;
  rpma_mr_local* target_mr_ = nullptr;
  rpma_mr_local* local_mr_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Send queue

TEST_F(SqDepthTest, DefaultTenUnsignalledThenProvider) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  for (uintptr_t i = 0; i < 10; ++i)
    ASSERT_EQ(0, Write(i, RPMA_F_COMPLETION_ON_ERROR)) << "write " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, Write(10, RPMA_F_COMPLETION_ON_ERROR));
  ExpectEveryPostRefused();
  // The receive queue is separate: a receive can still be posted.
  EXPECT_EQ(0, rpma_recv(pair_.client, local_mr_, 0, 8, Ctx(0x77)));
  // Nothing ever gives the slots back: still full.
  EXPECT_EQ(RPMA_E_PROVIDER, Write(11, RPMA_F_COMPLETION_ALWAYS));
  ExpectNoCompletion(client_cq_);
}

TEST_F(SqDepthTest, PostingBlockedUntilSignalledCompletionIsPolled) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  for (uintptr_t i = 0; i < 9; ++i)
    ASSERT_EQ(0, Write(i, RPMA_F_COMPLETION_ON_ERROR)) << "write " << i;
  ASSERT_EQ(0, Write(9, RPMA_F_COMPLETION_ALWAYS));
  // The signalled completion exists but is not polled yet: the queue is still full.
  EXPECT_EQ(RPMA_E_PROVIDER, Write(10, RPMA_F_COMPLETION_ON_ERROR));

  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(client_cq_, &wc));
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(9u, wc.wr_id);
  EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
  ExpectNoCompletion(client_cq_);

  // Polling it retired all ten: ten more fit, the eleventh does not.
  for (uintptr_t i = 10; i < 20; ++i)
    ASSERT_EQ(0, Write(i, RPMA_F_COMPLETION_ON_ERROR)) << "write " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, Write(20, RPMA_F_COMPLETION_ON_ERROR));
  ExpectNoCompletion(client_cq_);
}

TEST_F(SqDepthTest, SignalledUnpolledCompletionsHoldTheirSlots) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  for (uintptr_t i = 0; i < 10; ++i)
    ASSERT_EQ(0, Write(i, RPMA_F_COMPLETION_ALWAYS)) << "write " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, Write(10, RPMA_F_COMPLETION_ALWAYS));
  // Polling one completion gives back exactly one slot.
  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(client_cq_, &wc));
  EXPECT_EQ(0u, wc.wr_id);
  EXPECT_EQ(0, Write(11, RPMA_F_COMPLETION_ALWAYS));
  EXPECT_EQ(RPMA_E_PROVIDER, Write(12, RPMA_F_COMPLETION_ALWAYS));
  // Drain: completions 1..9 and 11, in posting order.
  for (uint64_t expected : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11}) {
    ASSERT_EQ(0, WaitWc(client_cq_, &wc));
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(expected, wc.wr_id);
  }
  ExpectNoCompletion(client_cq_);
  for (uintptr_t i = 20; i < 30; ++i)
    ASSERT_EQ(0, Write(i, RPMA_F_COMPLETION_ON_ERROR)) << "write " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, Write(30, RPMA_F_COMPLETION_ON_ERROR));
}

TEST_F(SqDepthTest, EveryKindOfWorkRequestTakesASlot) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  uint8_t recv_buf[8] = {};
  rpma_mr_local* recv_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(pair_.peer, recv_buf, sizeof(recv_buf), RPMA_MR_USAGE_RECV, &recv_mr));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr, 0, 8, Ctx(0x300 + i)));
  const char value[8] = {};
  const int f = RPMA_F_COMPLETION_ON_ERROR;
  EXPECT_EQ(0, Write(0, f));
  EXPECT_EQ(0, rpma_write(pair_.client, nullptr, 0, nullptr, 0, 0, f, Ctx(1)));
  EXPECT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 8, f, Ctx(2)));
  EXPECT_EQ(0, rpma_read(pair_.client, nullptr, 0, nullptr, 0, 0, f, Ctx(3)));
  EXPECT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 0, local_mr_, 0, 8, f, 1, Ctx(4)));
  EXPECT_EQ(0, rpma_atomic_write(pair_.client, remote_, 8, value, f, Ctx(5)));
  EXPECT_EQ(0, rpma_flush(pair_.client, remote_, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, f, Ctx(6)));
  EXPECT_EQ(0, rpma_send(pair_.client, local_mr_, 0, 8, f, Ctx(7)));
  EXPECT_EQ(0, rpma_send_with_imm(pair_.client, nullptr, 0, 0, f, 2, Ctx(8)));
  EXPECT_EQ(0, Write(9, f));
  ExpectEveryPostRefused();
  // The three receives were consumed by write_with_imm, send and send_with_imm.
  ibv_wc wc;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(0, WaitWc(server_cq_, &wc));
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(static_cast<uint64_t>(0x300 + i), wc.wr_id);
  }
  EXPECT_EQ(0, rpma_mr_dereg(&recv_mr));
}

TEST_F(SqDepthTest, CustomSqSizeFour) {
  ASSERT_NO_FATAL_FAILURE(NewCfg(&cfg_));
  ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg_, 4));
  ASSERT_NO_FATAL_FAILURE(Setup(cfg_));
  for (uintptr_t i = 0; i < 4; ++i)
    ASSERT_EQ(0, Write(i, RPMA_F_COMPLETION_ON_ERROR)) << "write " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, Write(4, RPMA_F_COMPLETION_ON_ERROR));
  EXPECT_EQ(RPMA_E_PROVIDER, Write(5, RPMA_F_COMPLETION_ALWAYS));
  ExpectNoCompletion(client_cq_);
}

TEST_F(SqDepthTest, CustomSqSizeFourSignalledEveryFourth) {
  ASSERT_NO_FATAL_FAILURE(NewCfg(&cfg_));
  ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg_, 4));
  ASSERT_NO_FATAL_FAILURE(Setup(cfg_));
  // Many rounds of 3 unsignalled + 1 signalled, polled each round, never hit the limit.
  for (uintptr_t i = 0; i < 40; ++i) {
    const bool signalled = i % 4 == 3;
    ASSERT_EQ(0, Write(i % 64, signalled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR))
        << "write " << i;
    if (signalled) {
      ibv_wc wc;
      ASSERT_EQ(0, WaitWc(client_cq_, &wc));
      EXPECT_EQ(i, wc.wr_id);
    }
  }
  ExpectNoCompletion(client_cq_);
}

TEST_F(SqDepthTest, ServerSendQueueIsIndependent) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  for (uintptr_t i = 0; i < 10; ++i) ASSERT_EQ(0, Write(i, RPMA_F_COMPLETION_ON_ERROR));
  EXPECT_EQ(RPMA_E_PROVIDER, Write(10, RPMA_F_COMPLETION_ON_ERROR));
  // The other side of the connection has its own send queue.
  EXPECT_EQ(
      0, rpma_read(pair_.server, nullptr, 0, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(0x55)));
  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(server_cq_, &wc));
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(0x55u, wc.wr_id);
}

// ---------------------------------------------------------------------------------------------
// Receive queue

TEST_F(SqDepthTest, DefaultRqSizeTen) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  for (uintptr_t i = 0; i < 5; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.client, local_mr_, 8 * i, 8, Ctx(i))) << "recv " << i;
  for (uintptr_t i = 5; i < 10; ++i)  // 0-byte receives count the same
    ASSERT_EQ(0, rpma_recv(pair_.client, nullptr, 0, 0, Ctx(i))) << "recv " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.client, local_mr_, 0, 8, Ctx(10)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.client, nullptr, 0, 0, Ctx(11)));
  // Sends are not affected by a full receive queue.
  EXPECT_EQ(0, Write(0, RPMA_F_COMPLETION_ALWAYS));
  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(client_cq_, &wc));
  EXPECT_EQ(0u, wc.wr_id);
  EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
  ExpectNoCompletion(client_cq_);
}

TEST_F(SqDepthTest, ConsumedReceiveFreesItsSlot) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  for (uintptr_t i = 0; i < 10; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.client, local_mr_, 8 * i, 8, Ctx(i))) << "recv " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.client, local_mr_, 0, 8, Ctx(10)));
  // The server sends one message: one receive is consumed.
  ASSERT_EQ(0, rpma_send(pair_.server, target_mr_, 0, 4, RPMA_F_COMPLETION_ALWAYS, Ctx(0x99)));
  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(server_cq_, &wc));
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(IBV_WC_SEND, wc.opcode);
  ASSERT_EQ(0, WaitWc(client_cq_, &wc));
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(IBV_WC_RECV, wc.opcode);
  EXPECT_EQ(0u, wc.wr_id);
  EXPECT_EQ(4u, wc.byte_len);
  // Exactly one slot is free again.
  EXPECT_EQ(0, rpma_recv(pair_.client, local_mr_, 0, 8, Ctx(11)));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.client, local_mr_, 0, 8, Ctx(12)));
}

TEST_F(SqDepthTest, CustomRqSizeThree) {
  ASSERT_NO_FATAL_FAILURE(NewCfg(&cfg_));
  ASSERT_EQ(0, rpma_conn_cfg_set_rq_size(cfg_, 3));
  ASSERT_NO_FATAL_FAILURE(Setup(cfg_));
  for (uintptr_t i = 0; i < 3; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.client, local_mr_, 8 * i, 8, Ctx(i))) << "recv " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.client, local_mr_, 0, 8, Ctx(3)));
  ExpectNoCompletion(client_cq_);
  // The server (default cfg) still takes ten.
  for (uintptr_t i = 0; i < 10; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(i))) << "server recv " << i;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_recv(pair_.server, nullptr, 0, 0, Ctx(10)));
}

}  // namespace
