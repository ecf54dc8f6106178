// ep_backlog_test.cc -- an endpoint holds at most 1024 connection requests nobody has taken
// (the backlog rdma_cm gives librpma's rpma_ep_listen): the next client is rejected
// (RPMA_CONN_REJECTED) rather than queued without bound, and once the server takes one,
// clients get through again. In process only: 1025 clients over TCP or shared memory would
// cost as many sockets or segments and test nothing more (wire_connection.cc shares the check).
#include <librpma.h>
#include <sys/resource.h>

#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kBacklog = 1024;

class EpBacklogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A connection in process holds no fd until asked, but leave room all the same.
    rlimit limit;
    ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &limit));
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
    ASSERT_NO_FATAL_FAILURE(pair_.Listen());
  }

  void TearDown() override {
    // The endpoint first: the requests still waiting are rejected; then the clients go.
    if (pair_.ep != nullptr) EXPECT_EQ(0, rpma_ep_shutdown(&pair_.ep));
    for (rpma_conn*& conn : clients_)
      if (conn != nullptr) EXPECT_EQ(0, rpma_conn_delete(&conn));
    ASSERT_NO_FATAL_FAILURE(pair_.Teardown());
  }

  // A new client's request; its connection is kept for TearDown.
  rpma_conn* Connect() {
    rpma_conn* client = nullptr;
    ClientConnect(pair_.peer, pair_.port, nullptr, nullptr, &client);
    clients_.push_back(client);
    return client;
  }

  ConnectedPair pair_;
  std::vector<rpma_conn*> clients_;
};

TEST_F(EpBacklogTest, PastTheBacklogAClientIsRejectedUntilTheServerTakesARequest) {
  for (size_t i = 0; i < kBacklog; ++i) {
    ASSERT_NO_FATAL_FAILURE(Connect());
    ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(clients_.back())) << i;
  }
  rpma_conn* turned_away = nullptr;
  ASSERT_NO_FATAL_FAILURE(turned_away = Connect());
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(turned_away, RPMA_CONN_REJECTED));

  // The server takes the oldest request (and rejects it): there is room for one more.
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(pair_.ep, nullptr, &req));
  ASSERT_EQ(0, rpma_conn_req_delete(&req));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(clients_[0], RPMA_CONN_REJECTED));
  rpma_conn* next = nullptr;
  ASSERT_NO_FATAL_FAILURE(next = Connect());
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(next));
  rpma_conn* one_too_many = nullptr;
  ASSERT_NO_FATAL_FAILURE(one_too_many = Connect());
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(one_too_many, RPMA_CONN_REJECTED));
}

}  // namespace
