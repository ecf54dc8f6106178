// lifecycle_test.cc -- whole client/server sessions in one process: setup, use, teardown orders.
#include <librpma.h>

#include <string.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

// "disconnect, wait for CLOSED, delete" on `active`, and "wait for CLOSED, disconnect (returns 0),
// delete" on `passive` (examples 02 client / 02 server).
void TeardownActivePassive(rpma_conn** active, rpma_conn** passive) {
  ASSERT_EQ(0, rpma_conn_disconnect(*active));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*active, RPMA_CONN_CLOSED));
  ASSERT_EQ(0, rpma_conn_delete(active));
  ASSERT_EQ(nullptr, *active);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*passive, RPMA_CONN_CLOSED));
  ASSERT_EQ(0, rpma_conn_disconnect(*passive));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(*passive));
  ASSERT_EQ(0, rpma_conn_delete(passive));
  ASSERT_EQ(nullptr, *passive);
}

// A client connects to a port nobody listens on.
void ConnectToClosedPort(rpma_peer* peer) {
  std::string closed_port = FreeTcpPort();
  ASSERT_FALSE(closed_port.empty());
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, closed_port.c_str(), nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_REJECTED));
  (void)rpma_conn_disconnect(client);
  ASSERT_EQ(0, rpma_conn_delete(&client));
}

// Runs `call` on its own thread and waits for it up to the safety timeout. Returns false if it
// did not return in time: the thread is then detached, still inside the library, and the caller
// must leak every object the call uses (deleting them could crash the stuck thread).
template <typename Call>
bool ReturnsInTime(Call call) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread thread([call, done]() {
    call();
    done->set_value();
  });
  if (finished.wait_for(std::chrono::milliseconds(kSafetyTimeoutMs)) != std::future_status::ready) {
    thread.detach();
    return false;
  }
  thread.join();
  return true;
}

// One session as the examples run it: the server passes its MR descriptor as private data, the
// client introduces itself with its own private data and reads the server's memory.
TEST(LifecycleTest, CompleteSession) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());

  ASSERT_NO_FATAL_FAILURE(ConnectToClosedPort(pair.peer));
  ASSERT_NO_FATAL_FAILURE(ConnectAndGetRejected(pair.peer, pair.ep, pair.port, true));

  // Server memory and its descriptor.
  char server_buf[64];
  memset(server_buf, 0, sizeof(server_buf));
  strcpy(server_buf, "the server's memory");
  rpma_mr_local* server_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(pair.peer, server_buf, sizeof(server_buf), RPMA_MR_USAGE_READ_SRC,
                           &server_mr));
  size_t desc_size = 0;
  ASSERT_EQ(0, rpma_mr_get_descriptor_size(server_mr, &desc_size));
  ASSERT_EQ(21u, desc_size);
  char desc[21];
  ASSERT_EQ(0, rpma_mr_get_descriptor(server_mr, desc));
  rpma_conn_private_data server_pdata = {desc, 21};

  char hello[28] = "hello from the client";
  rpma_conn_private_data client_pdata = {hello, sizeof(hello)};

  // Client: request + connect.
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(pair.peer, kLoopback, pair.port.c_str(), nullptr, &req));
  ASSERT_EQ(0, rpma_conn_req_connect(&req, &client_pdata, &pair.client));
  // Server: request, look at the client's private data, accept.
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(pair.ep, nullptr, &incoming));
  rpma_conn_private_data got = {nullptr, 0};
  ASSERT_EQ(0, rpma_conn_req_get_private_data(incoming, &got));
  ASSERT_EQ(sizeof(hello), got.len);
  EXPECT_EQ(0, memcmp(hello, got.ptr, sizeof(hello)));
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming, &server_pdata, &pair.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_ESTABLISHED));

  // Client: the descriptor arrived with ESTABLISHED; read the server's memory.
  ASSERT_EQ(0, rpma_conn_get_private_data(pair.client, &got));
  ASSERT_EQ(21, got.len);
  rpma_mr_remote* remote = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(got.ptr, got.len, &remote));
  char client_buf[64];
  memset(client_buf, 0, sizeof(client_buf));
  rpma_mr_local* client_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(pair.peer, client_buf, sizeof(client_buf), RPMA_MR_USAGE_READ_DST,
                           &client_mr));
  int context = 0;
  ASSERT_EQ(0, rpma_read(pair.client, client_mr, 0, remote, 0, sizeof(server_buf),
                         RPMA_F_COMPLETION_ALWAYS, &context));
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(pair.client, &cq));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(WaitForCompletion(cq, &wc)) << "no read completion";
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&context), wc.wr_id);
  EXPECT_EQ(0, memcmp(server_buf, client_buf, sizeof(server_buf)));

  // Teardown: client "disconnect, wait, delete"; server "wait, disconnect, delete".
  ASSERT_NO_FATAL_FAILURE(TeardownActivePassive(&pair.client, &pair.server));
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
  EXPECT_EQ(0, rpma_mr_dereg(&client_mr));

  // A second connection on the same endpoint, torn down the other way round.
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_NO_FATAL_FAILURE(TeardownActivePassive(&pair.server, &pair.client));

  EXPECT_EQ(0, rpma_mr_dereg(&server_mr));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(LifecycleTest, TwentySequentialConnectionsOnOneEndpoint) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE("connection #" + std::to_string(i));
    uint8_t client_byte = static_cast<uint8_t>(i);
    uint8_t server_byte = static_cast<uint8_t>(100 + i);
    rpma_conn_private_data client_pdata = {&client_byte, 1};
    rpma_conn_private_data server_pdata = {&server_byte, 1};
    PairOptions options;
    options.client_pdata = &client_pdata;
    options.server_pdata = &server_pdata;
    ASSERT_NO_FATAL_FAILURE(pair.Connect(options));

    rpma_conn_private_data got = {nullptr, 0};
    ASSERT_EQ(0, rpma_conn_get_private_data(pair.client, &got));
    ASSERT_EQ(1, got.len);
    EXPECT_EQ(server_byte, *static_cast<uint8_t*>(got.ptr));
    ASSERT_EQ(0, rpma_conn_get_private_data(pair.server, &got));
    ASSERT_EQ(1, got.len);
    EXPECT_EQ(client_byte, *static_cast<uint8_t*>(got.ptr));

    switch (i % 4) {
      case 0:
        ASSERT_NO_FATAL_FAILURE(TeardownActivePassive(&pair.client, &pair.server));
        break;
      case 1:
        ASSERT_NO_FATAL_FAILURE(TeardownActivePassive(&pair.server, &pair.client));
        break;
      case 2:
        ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&pair.client, &pair.server));
        break;
      default:
        ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&pair.server, &pair.client));
        break;
    }
  }
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(LifecycleTest, FiveConcurrentConnectionsOnOneEndpoint) {
  constexpr int kCount = 5;
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());

  // All clients connect before the server takes any request. Each client's private data is its
  // index, so the server can tell which request is whose, whatever the order they arrive in.
  uint8_t client_ids[kCount];
  rpma_conn* clients[kCount] = {};
  for (int i = 0; i < kCount; ++i) {
    client_ids[i] = static_cast<uint8_t>(i);
    rpma_conn_private_data pdata = {&client_ids[i], 1};
    rpma_conn_req* req = nullptr;
    ASSERT_EQ(0, rpma_conn_req_new(pair.peer, kLoopback, pair.port.c_str(), nullptr, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, &pdata, &clients[i]));
  }

  rpma_conn* servers[kCount] = {};
  uint8_t server_ids[kCount];
  for (int n = 0; n < kCount; ++n) {
    rpma_conn_req* incoming = nullptr;
    ASSERT_NO_FATAL_FAILURE(NextConnReq(pair.ep, nullptr, &incoming));
    rpma_conn_private_data got = {nullptr, 0};
    ASSERT_EQ(0, rpma_conn_req_get_private_data(incoming, &got));
    ASSERT_EQ(1, got.len);
    int i = *static_cast<uint8_t*>(got.ptr);
    ASSERT_LT(i, kCount);
    ASSERT_EQ(nullptr, servers[i]) << "two requests carried id " << i;
    server_ids[i] = static_cast<uint8_t>(200 + i);
    rpma_conn_private_data reply = {&server_ids[i], 1};
    ASSERT_EQ(0, rpma_conn_req_connect(&incoming, &reply, &servers[i]));
  }

  std::vector<uint32_t> qp_nums;
  for (int i = 0; i < kCount; ++i) {
    SCOPED_TRACE("connection #" + std::to_string(i));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(clients[i], RPMA_CONN_ESTABLISHED));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(servers[i], RPMA_CONN_ESTABLISHED));
    rpma_conn_private_data got = {nullptr, 0};
    ASSERT_EQ(0, rpma_conn_get_private_data(clients[i], &got));
    ASSERT_EQ(1, got.len);
    EXPECT_EQ(200 + i, *static_cast<uint8_t*>(got.ptr)) << "client got another client's reply";
    for (rpma_conn* conn : {clients[i], servers[i]}) {
      uint32_t qp_num = 0;
      ASSERT_EQ(0, rpma_conn_get_qp_num(conn, &qp_num));
      EXPECT_NE(0u, qp_num);
      for (uint32_t other : qp_nums) EXPECT_NE(other, qp_num);
      qp_nums.push_back(qp_num);
    }
  }

  // Closing one connection does not disturb the others.
  ASSERT_NO_FATAL_FAILURE(TeardownActivePassive(&clients[2], &servers[2]));
  for (int i = 0; i < kCount; ++i) {
    if (clients[i] == nullptr) continue;
    ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(clients[i]));
    ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(servers[i]));
  }
  // The rest, in mixed orders.
  ASSERT_NO_FATAL_FAILURE(TeardownActivePassive(&servers[0], &clients[0]));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&clients[4], &servers[4]));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&servers[1], &clients[1]));
  ASSERT_EQ(0, rpma_conn_delete(&clients[3]));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(servers[3], RPMA_CONN_CLOSED));
  ASSERT_EQ(0, rpma_conn_disconnect(servers[3]));
  ASSERT_EQ(0, rpma_conn_delete(&servers[3]));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(LifecycleTest, EndpointServesAgainAfterRejectionsAndFailedConnects) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  for (int i = 0; i < 3; ++i) {
    ASSERT_NO_FATAL_FAILURE(ConnectAndGetRejected(pair.peer, pair.ep, pair.port, true));
  }
  // A client whose private data is too long never reaches the server.
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(pair.peer, kLoopback, pair.port.c_str(), nullptr, &req));
  char too_long[57] = {};
  rpma_conn_private_data pdata = {too_long, sizeof(too_long)};
  rpma_conn* never = nullptr;
  ASSERT_EQ(RPMA_E_PROVIDER, rpma_conn_req_connect(&req, &pdata, &never));
  ASSERT_EQ(nullptr, never);
  // The next good client is served normally.
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(LifecycleTest, PeerDeleteWithLiveConnectionFailsButFreesThePeer) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_peer_delete(&pair.peer));
  EXPECT_EQ(nullptr, pair.peer);
  // The connections and the endpoint still work and are torn down normally.
  ASSERT_NO_FATAL_FAILURE(TeardownActivePassive(&pair.client, &pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

TEST(LifecycleTest, PeerDeleteAfterConnectionsAreGoneSucceeds) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&pair.client, &pair.server));
  ASSERT_EQ(0, rpma_ep_shutdown(&pair.ep));
  EXPECT_EQ(0, rpma_peer_delete(&pair.peer));
  EXPECT_EQ(nullptr, pair.peer);
}

// Example 02's server sits blocked in rpma_conn_next_event while the client works and then
// disconnects: the blocked call must wake up with CLOSED.
TEST(LifecycleTest, BlockedNextEventWakesUpOnPeerDisconnect) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  struct Result {
    int ret = 1;
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
  };
  auto result = std::make_shared<Result>();
  rpma_conn* server = pair.server;
  auto wait_for_event = [server, result]() {
    result->ret = rpma_conn_next_event(server, &result->event);
  };
  auto disconnect_client =
      std::async(std::launch::async, [&pair]() { return rpma_conn_disconnect(pair.client); });
  if (!ReturnsInTime(wait_for_event)) {
    ADD_FAILURE() << "rpma_conn_next_event never returned after the peer disconnected";
    pair.client = pair.server = nullptr;  // leaked: the stuck thread still uses the server
    pair.ep = nullptr;
    pair.peer = nullptr;
    return;
  }
  EXPECT_EQ(0, disconnect_client.get());
  EXPECT_EQ(0, result->ret);
  EXPECT_EQ(RPMA_CONN_CLOSED, result->event);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// A server blocked in rpma_ep_next_conn_req wakes up when a client connects.
TEST(LifecycleTest, BlockedNextConnReqWakesUpOnConnect) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  struct Result {
    int ret = 1;
    rpma_conn_req* req = nullptr;
  };
  auto result = std::make_shared<Result>();
  rpma_ep* ep = pair.ep;
  auto take_request = [ep, result]() {
    result->ret = rpma_ep_next_conn_req(ep, nullptr, &result->req);
  };
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(pair.peer, kLoopback, pair.port.c_str(), nullptr, &req));
  auto connect_client = std::async(std::launch::async, [&req, &pair]() {
    return rpma_conn_req_connect(&req, nullptr, &pair.client);
  });
  if (!ReturnsInTime(take_request)) {
    ADD_FAILURE() << "rpma_ep_next_conn_req never returned after a client connected";
    connect_client.wait();
    pair.client = nullptr;  // leaked: the stuck thread still uses the endpoint
    pair.ep = nullptr;
    pair.peer = nullptr;
    return;
  }
  ASSERT_EQ(0, connect_client.get());
  ASSERT_EQ(0, result->ret);
  ASSERT_NE(nullptr, result->req);
  ASSERT_EQ(0, rpma_conn_req_connect(&result->req, nullptr, &pair.server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.server, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

}  // namespace
