// cq_overflow_test.cc -- more completions than a completion queue holds overflow it as on a
// NIC: what it held is polled in order, then rpma_cq_get_wc fails with RPMA_E_PROVIDER for
// good, a waiter is woken rather than left waiting, and the connection whose completion did
// not fit is lost on both sides (RPMA_CONN_LOST). Nothing is dropped silently or grown.
#include <librpma.h>

#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kSize = 4096;

class CqOverflowTest : public PairFixture {
 protected:
  // Connects with the client's and the server's configurations, then registers a target on
  // the server (written to, received into) and a source on the client.
  void Setup(const rpma_conn_cfg* client_cfg, const rpma_conn_cfg* server_cfg) {
    PairOptions options;
    options.client_cfg = client_cfg;
    options.server_cfg = server_cfg;
    ASSERT_NO_FATAL_FAILURE(ConnectPair(options));
    target_ = Register(kSize, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_RECV, 0);
    ASSERT_NE(nullptr, target_);
    remote_ = regs_.RemoteOf(target_);
    ASSERT_NE(nullptr, remote_);
    source_ = Register(kSize, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND, 1);
    ASSERT_NE(nullptr, source_);
  }

  rpma_conn_cfg* Cfg(uint32_t cq_size, uint32_t sq_size, uint32_t rq_size) {
    rpma_conn_cfg* cfg = NewCfg();
    EXPECT_EQ(0, rpma_conn_cfg_set_cq_size(cfg, cq_size));
    EXPECT_EQ(0, rpma_conn_cfg_set_sq_size(cfg, sq_size));
    EXPECT_EQ(0, rpma_conn_cfg_set_rq_size(cfg, rq_size));
    return cfg;
  }

  // Both sides read RPMA_CONN_LOST.
  void ExpectLostOnBothSides() {
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_LOST));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_LOST));
  }

  // Deletes the two lost connections (and with them their completion queues).
  void DeleteBoth() {
    EXPECT_EQ(0, rpma_conn_delete(&pair_.client));
    EXPECT_EQ(0, rpma_conn_delete(&pair_.server));
  }

  // Polls `cq` until it fails: the wr_ids of the completions it gave, each successful with
  // `opcode`. The failure must be RPMA_E_PROVIDER, and stay so.
  std::vector<uint64_t> DrainUntilOverflow(rpma_cq* cq, ibv_wc_opcode opcode) {
    std::vector<uint64_t> ids;
    for (;;) {
      ibv_wc wc;
      int ret = WaitWc(cq, &wc);
      if (ret != 0) {
        EXPECT_EQ(RPMA_E_PROVIDER, ret);
        break;
      }
      EXPECT_EQ(IBV_WC_SUCCESS, wc.status) << wc.wr_id;
      EXPECT_EQ(opcode, wc.opcode) << wc.wr_id;
      ids.push_back(wc.wr_id);
    }
    ibv_wc wc[4];
    int got = -1;
    EXPECT_EQ(RPMA_E_PROVIDER, rpma_cq_get_wc(cq, 4, wc, &got));
    EXPECT_EQ(RPMA_E_PROVIDER, rpma_cq_get_wc(cq, 1, wc, nullptr));
    return ids;
  }

  Buffer* target_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  Buffer* source_ = nullptr;
};

TEST_F(CqOverflowTest, SendCompletionsPastTheDepthOverflowTheRequestersQueue) {
  ASSERT_NO_FATAL_FAILURE(Setup(Cfg(4, 8, 4), nullptr));
  // Five signalled writes, none polled: the fifth completion does not fit.
  for (uintptr_t i = 1; i <= 5; ++i)
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, 8 * i, source_->mr, 8 * i, 8,
                            RPMA_F_COMPLETION_ALWAYS, Ctx(i)));
  ASSERT_NO_FATAL_FAILURE(ExpectLostOnBothSides());
  EXPECT_EQ((std::vector<uint64_t>{1, 2, 3, 4}), DrainUntilOverflow(client_cq_, IBV_WC_RDMA_WRITE));
  DeleteBoth();
}

TEST_F(CqOverflowTest, ReceiveCompletionsPastTheDepthOverflowTheRespondersQueue) {
  ASSERT_NO_FATAL_FAILURE(Setup(nullptr, Cfg(2, 4, 4)));
  // Three receives posted, three messages: the third receive completion does not fit.
  for (uintptr_t i = 1; i <= 3; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.server, target_->mr, 8 * i, 8, Ctx(100 + i)));
  for (uintptr_t i = 1; i <= 3; ++i)
    ASSERT_EQ(0,
              rpma_send(pair_.client, source_->mr, 8 * i, 8, RPMA_F_COMPLETION_ON_ERROR, Ctx(i)));
  ASSERT_NO_FATAL_FAILURE(ExpectLostOnBothSides());
  EXPECT_EQ((std::vector<uint64_t>{101, 102}), DrainUntilOverflow(server_cq_, IBV_WC_RECV));
  DeleteBoth();
}

TEST_F(CqOverflowTest, AWaiterIsWokenByTheOverflowAndNeverBlocksAgain) {
  ASSERT_NO_FATAL_FAILURE(Setup(Cfg(1, 4, 4), nullptr));
  int fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(client_cq_, &fd));
  for (uintptr_t i = 1; i <= 2; ++i)
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, source_->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                            Ctx(i)));
  // The first completion raised the event; every wait after the overflow returns at once
  // (its re-arming raises the next), so a loop of wait and poll ends with the error.
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs)) << round;
    ASSERT_EQ(0, rpma_cq_wait(client_cq_)) << round;
  }
  ibv_wc wc;
  ASSERT_EQ(0, rpma_cq_get_wc(client_cq_, 1, &wc, nullptr));
  EXPECT_EQ(1u, wc.wr_id);
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_cq_get_wc(client_cq_, 1, &wc, nullptr));
  ASSERT_NO_FATAL_FAILURE(ExpectLostOnBothSides());
  DeleteBoth();
}

TEST_F(CqOverflowTest, AQueueFilledToItsDepthAndDrainedGoesOn) {
  ASSERT_NO_FATAL_FAILURE(Setup(Cfg(4, 8, 4), nullptr));
  for (int round = 0; round < 3; ++round) {
    for (uintptr_t i = 1; i <= 4; ++i)
      ASSERT_EQ(0, rpma_write(pair_.client, remote_, 8 * i, source_->mr, 8 * i, 8,
                              RPMA_F_COMPLETION_ALWAYS, Ctx(i)));
    for (uintptr_t i = 1; i <= 4; ++i)
      ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, i, IBV_WC_RDMA_WRITE));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(pair_.client));
}

}  // namespace
