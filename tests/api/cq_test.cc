// cq_test.cc -- rpma_cq_get_fd, rpma_cq_wait, rpma_cq_get_wc: argument checks and empty queues.
#include <librpma.h>

#include <fcntl.h>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

// One established pair; the client's connection uses `rcq_size` and `shared`.
class CqTest : public PairFixture {
 protected:
  void Connect(uint32_t rcq_size, bool shared) {
    ASSERT_NO_FATAL_FAILURE(NewCfg(&cfg_));
    ASSERT_EQ(0, rpma_conn_cfg_set_rcq_size(cfg_, rcq_size));
    ASSERT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg_, shared));
    PairOptions options;
    options.client_cfg = cfg_;
    ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
    ASSERT_EQ(0, rpma_conn_get_cq(pair_.client, &cq_));
    ASSERT_NE(nullptr, cq_);
    ASSERT_EQ(0, rpma_conn_get_rcq(pair_.client, &rcq_));
  }

  rpma_conn_cfg* cfg_ = nullptr;
  rpma_cq* cq_ = nullptr;
  rpma_cq* rcq_ = nullptr;
};

// rpma_cq_get_fd

TEST_F(CqTest, GetFdNullCq) {
  int fd = -1;
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_fd(nullptr, &fd));
}

TEST_F(CqTest, GetFdNullFd) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_fd(cq_, nullptr));
}

TEST_F(CqTest, GetFdIsARealFdPerCq) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, false));
  ASSERT_NE(nullptr, rcq_);
  int cq_fd = -1;
  int rcq_fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(cq_, &cq_fd));
  ASSERT_EQ(0, rpma_cq_get_fd(rcq_, &rcq_fd));
  EXPECT_NE(-1, fcntl(cq_fd, F_GETFL));
  EXPECT_NE(-1, fcntl(rcq_fd, F_GETFL));
  EXPECT_NE(cq_fd, rcq_fd);
  EXPECT_FALSE(IsReadableNow(cq_fd));
  EXPECT_FALSE(IsReadableNow(rcq_fd));
}

TEST_F(CqTest, GetFdWithSharedChannelIsTheSharedFd) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  ASSERT_NE(nullptr, rcq_);
  int compl_fd = -1;
  int cq_fd = -1;
  int rcq_fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &compl_fd));
  ASSERT_EQ(0, rpma_cq_get_fd(cq_, &cq_fd));
  ASSERT_EQ(0, rpma_cq_get_fd(rcq_, &rcq_fd));
  EXPECT_EQ(compl_fd, cq_fd);
  EXPECT_EQ(compl_fd, rcq_fd);
}

// rpma_cq_wait

TEST_F(CqTest, WaitNullCq) { EXPECT_EQ(RPMA_E_INVAL, rpma_cq_wait(nullptr)); }

TEST_F(CqTest, WaitNonBlockingWithoutCompletion) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, false));
  for (rpma_cq* cq : {cq_, rcq_}) {
    ASSERT_NE(nullptr, cq);
    int fd = -1;
    ASSERT_EQ(0, rpma_cq_get_fd(cq, &fd));
    ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
    EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq));
    EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq));
  }
}

TEST_F(CqTest, WaitOnSharedChannel) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  // O_NONBLOCK so that an implementation that waits instead of refusing cannot hang the test.
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(cq_));
  ASSERT_NE(nullptr, rcq_);
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(rcq_));
}

TEST_F(CqTest, WaitOnSharedChannelWithoutRcq) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, true));
  EXPECT_EQ(nullptr, rcq_);
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(cq_));
}

// rpma_cq_get_wc

TEST_F(CqTest, GetWcNullCq) {
  ibv_wc wc = {};
  int got = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(nullptr, 1, &wc, &got));
}

TEST_F(CqTest, GetWcZeroEntries) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  ibv_wc wc = {};
  int got = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(cq_, 0, &wc, &got));
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(cq_, 0, &wc, nullptr));
}

TEST_F(CqTest, GetWcNegativeEntries) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  ibv_wc wc = {};
  int got = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(cq_, -1, &wc, &got));
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(cq_, -100, &wc, &got));
}

TEST_F(CqTest, GetWcNullWc) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int got = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(cq_, 1, nullptr, &got));
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(cq_, 1, nullptr, nullptr));
}

TEST_F(CqTest, GetWcManyEntriesWithoutNumEntriesGot) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  ibv_wc wc[2] = {};
  EXPECT_EQ(RPMA_E_INVAL, rpma_cq_get_wc(cq_, 2, wc, nullptr));
}

TEST_F(CqTest, GetWcEmptyCq) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, false));
  ibv_wc wc[4] = {};
  int got = 0;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq_, 1, wc, nullptr));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq_, 1, wc, &got));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq_, 4, wc, &got));
  ASSERT_NE(nullptr, rcq_);
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(rcq_, 1, wc, nullptr));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(rcq_, 4, wc, &got));
}

TEST_F(CqTest, GetWcEmptyCqWithSharedChannel) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  ibv_wc wc[2] = {};
  int got = 0;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq_, 2, wc, &got));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(rcq_, 2, wc, &got));
}

}  // namespace
