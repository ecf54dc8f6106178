// conn_lifecycle_test.cc -- the connection lifecycle as a librpma user drives it: the events
// each side sees for each way a connection (or a request) ends, the fds, and failed
// connects. Runs in process, and over tcp and shm (the _over_* targets).
#include <librpma.h>
#include <rpma_sim.h>

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

// The next event of `conn` within `timeout_ms`, or RPMA_CONN_UNDEFINED if none came (the fd
// never became readable) or rpma_conn_next_event failed.
rpma_conn_event EventWithin(rpma_conn* conn, int timeout_ms) {
  int fd = -1;
  if (rpma_conn_get_event_fd(conn, &fd) != 0) return RPMA_CONN_UNDEFINED;
  if (!WaitReadable(fd, timeout_ms)) return RPMA_CONN_UNDEFINED;
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  if (rpma_conn_next_event(conn, &event) != 0) return RPMA_CONN_UNDEFINED;
  return event;
}

const char* Name(rpma_conn_event event) {
  return event == RPMA_CONN_UNDEFINED ? "no event" : rpma_utils_conn_event_2str(event);
}

// `peer` listens on a free port (*ep) and sends a request of its own there (*client).
void ListenAndConnect(rpma_peer* peer, rpma_ep** ep, rpma_conn** client) {
  const std::string port = FreeTcpPort();
  ASSERT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), ep));
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req));
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, client));
}

// A server peer listening, and a separate client peer (two nodes of the fabric).
class TwoPeers : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&server_peer_));
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&client_peer_));
    port_ = FreeTcpPort();
    ASSERT_EQ(0, rpma_ep_listen(server_peer_, kLoopback, port_.c_str(), &ep_));
  }
  void TearDown() override {
    for (rpma_conn** conn : {&client_, &server_}) {
      if (*conn != nullptr) {
        EXPECT_EQ(0, rpma_conn_delete(conn));
      }
    }
    if (incoming_ != nullptr) {
      EXPECT_EQ(0, rpma_conn_req_delete(&incoming_));
    }
    if (ep_ != nullptr) {
      EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    }
    for (rpma_peer** peer : {&client_peer_, &server_peer_}) {
      if (*peer != nullptr) {
        EXPECT_EQ(0, rpma_peer_delete(peer));
      }
    }
  }

  // The client sends its request; it waits on the endpoint (the ep fd is readable).
  void RequestPending() {
    rpma_conn_req* req = nullptr;
    ASSERT_EQ(0, rpma_conn_req_new(client_peer_, kLoopback, port_.c_str(), nullptr, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client_));
    int ep_fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
    ASSERT_TRUE(WaitReadable(ep_fd, kSafetyTimeoutMs));
  }

  rpma_peer* server_peer_ = nullptr;
  rpma_peer* client_peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  rpma_conn* client_ = nullptr;
  rpma_conn* server_ = nullptr;
  rpma_conn_req* incoming_ = nullptr;
};

// rpma_sim_node_fail(3): "each connection of the peer, established or being set up, is lost
// on both sides ... a connection request still being set up ends as RPMA_CONN_UNREACHABLE".
// The server's node fails while the client's request waits on the server's endpoint.
TEST_F(TwoPeers, ServerNodeFailureEndsARequestWaitingOnItsEndpoint) {
  ASSERT_NO_FATAL_FAILURE(RequestPending());
  ASSERT_EQ(0, rpma_sim_node_fail(server_peer_));
  rpma_conn_event event = EventWithin(client_, kSafetyTimeoutMs);
  EXPECT_EQ(RPMA_CONN_UNREACHABLE, event) << "client saw: " << Name(event);
  // The endpoint listens on: a later request reaches it, and a second failure ends it too.
  ASSERT_EQ(0, rpma_conn_delete(&client_));
  ASSERT_NO_FATAL_FAILURE(RequestPending());
  ASSERT_EQ(0, rpma_sim_node_fail(server_peer_));
  event = EventWithin(client_, kSafetyTimeoutMs);
  EXPECT_EQ(RPMA_CONN_UNREACHABLE, event)
      << "after a second failure the client saw: " << Name(event);
}

// The same with the request taken by the server (rpma_ep_next_conn_req) but not accepted.
TEST_F(TwoPeers, ServerNodeFailureEndsARequestTakenButNotAccepted) {
  ASSERT_NO_FATAL_FAILURE(RequestPending());
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming_));
  ASSERT_EQ(0, rpma_sim_node_fail(server_peer_));
  rpma_conn_event event = EventWithin(client_, kSafetyTimeoutMs);
  EXPECT_EQ(RPMA_CONN_UNREACHABLE, event) << "client saw: " << Name(event);
}

// rpma_sim_node_fail(3): "a later rpma_conn_req_connect(3) of a taken one gives the server
// RPMA_CONN_LOST" (the call itself succeeds).
TEST_F(TwoPeers, ConnectOfARequestTakenBeforeTheServerNodeFailedGivesLost) {
  ASSERT_NO_FATAL_FAILURE(RequestPending());
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming_));
  ASSERT_EQ(0, rpma_sim_node_fail(server_peer_));
  EXPECT_EQ(RPMA_CONN_UNREACHABLE, EventWithin(client_, kSafetyTimeoutMs));
  int ret = rpma_conn_req_connect(&incoming_, nullptr, &server_);
  ASSERT_EQ(0, ret) << "rpma_conn_req_connect of the taken request failed";
  rpma_conn_event event = EventWithin(server_, kSafetyTimeoutMs);
  EXPECT_EQ(RPMA_CONN_LOST, event) << "server saw: " << Name(event);
}

// rpma_ep_shutdown with a request nobody took: librpma destroys the pending child ids
// (rdma_cm rejects them): the client reads RPMA_CONN_REJECTED.
TEST_F(TwoPeers, ShutdownRejectsAPendingRequest) {
  ASSERT_NO_FATAL_FAILURE(RequestPending());
  ASSERT_EQ(0, rpma_ep_shutdown(&ep_));
  rpma_conn_event event = EventWithin(client_, kSafetyTimeoutMs);
  EXPECT_EQ(RPMA_CONN_REJECTED, event) << "client saw: " << Name(event);
}

// A request the server took before the endpoint's shutdown is its own: it can still be
// accepted, and the connection works.
TEST_F(TwoPeers, RequestTakenBeforeShutdownCanStillBeAccepted) {
  ASSERT_NO_FATAL_FAILURE(RequestPending());
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming_));
  ASSERT_EQ(0, rpma_ep_shutdown(&ep_));
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming_, nullptr, &server_));
  EXPECT_EQ(RPMA_CONN_ESTABLISHED, EventWithin(client_, kSafetyTimeoutMs));
  EXPECT_EQ(RPMA_CONN_ESTABLISHED, EventWithin(server_, kSafetyTimeoutMs));
  ASSERT_EQ(0, rpma_conn_disconnect(client_));
  EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(client_, kSafetyTimeoutMs));
  EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(server_, kSafetyTimeoutMs));
}

// A client that connects as the endpoint shuts down: its request may still wait in the
// listening socket's backlog. rdma_cm rejects the requests of a listener it destroys: the
// client reads RPMA_CONN_REJECTED, never UNREACHABLE (which the reset of closing the
// listener with the connection still in its backlog would give).
TEST(EpShutdownTest, AClientConnectingAsTheEndpointShutsDownIsRejected) {
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  for (int i = 0; i < 40; ++i) {
    rpma_ep* ep = nullptr;
    rpma_conn* client = nullptr;
    ASSERT_NO_FATAL_FAILURE(ListenAndConnect(peer, &ep, &client));
    ASSERT_EQ(0, rpma_ep_shutdown(&ep));
    rpma_conn_event event = EventWithin(client, kSafetyTimeoutMs);
    EXPECT_EQ(RPMA_CONN_REJECTED, event) << "attempt " << i << ": client saw " << Name(event);
    ASSERT_EQ(0, rpma_conn_delete(&client));
  }
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// Disconnect called twice before either side read CLOSED: 0 each time, one CLOSED each side.
TEST(LifecycleEventsTest, DisconnectTwiceBeforeClosedGivesOneClosedEach) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(pair.client, kSafetyTimeoutMs));
  EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(pair.server, kSafetyTimeoutMs));
  EXPECT_EQ(RPMA_CONN_UNDEFINED, EventWithin(pair.client, 300));
  EXPECT_EQ(RPMA_CONN_UNDEFINED, EventWithin(pair.server, 300));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// A thread blocked in rpma_conn_next_event wakes with CLOSED when its own side disconnects.
TEST(LifecycleEventsTest, OwnDisconnectWakesABlockedNextEvent) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  auto event = std::make_shared<rpma_conn_event>(RPMA_CONN_UNDEFINED);
  auto ret = std::make_shared<int>(1);
  rpma_conn* client = pair.client;
  std::thread waiter([client, event, ret] { *ret = rpma_conn_next_event(client, event.get()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(0, rpma_conn_disconnect(pair.client));
  waiter.join();
  EXPECT_EQ(0, *ret);
  EXPECT_EQ(RPMA_CONN_CLOSED, *event);
  EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(pair.server, kSafetyTimeoutMs));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// Failed connects leave nothing behind: the peer deletes with 0 (ibv_dealloc_pd finds no QP).
TEST(FailedConnectTest, ClientPrivateDataTooLongLeavesThePeerDeletable) {
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  std::string port = FreeTcpPort();
  rpma_ep* ep = nullptr;
  ASSERT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), &ep));
  std::vector<uint8_t> bytes(57, 7);
  rpma_conn_private_data pdata = {bytes.data(), 57};
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req));
  rpma_conn* client = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_connect(&req, &pdata, &client));
  EXPECT_EQ(nullptr, req);
  EXPECT_EQ(nullptr, client);
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep, &fd));
  EXPECT_FALSE(WaitReadable(fd, 200)) << "a request reached the server";
  EXPECT_EQ(0, rpma_ep_shutdown(&ep));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

TEST(FailedConnectTest, ServerPrivateDataTooLongLeavesThePeerDeletable) {
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  rpma_ep* ep = nullptr;
  rpma_conn* client = nullptr;
  ASSERT_NO_FATAL_FAILURE(ListenAndConnect(peer, &ep, &client));
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(ep, nullptr, &incoming));
  std::vector<uint8_t> bytes(197, 7);
  rpma_conn_private_data pdata = {bytes.data(), 197};
  rpma_conn* server = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_connect(&incoming, &pdata, &server));
  EXPECT_EQ(nullptr, incoming);
  EXPECT_EQ(nullptr, server);
  EXPECT_EQ(RPMA_CONN_REJECTED, EventWithin(client, kSafetyTimeoutMs));
  EXPECT_EQ(RPMA_CONN_UNDEFINED, EventWithin(client, 300));
  EXPECT_EQ(0, rpma_conn_delete(&client));
  EXPECT_EQ(0, rpma_ep_shutdown(&ep));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// After REJECTED, a non-blocking event fd gives RPMA_E_NO_EVENT, not another event.
TEST(LifecycleEventsTest, NothingFollowsRejected) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(pair.peer, kLoopback, pair.port.c_str(), nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(pair.ep, nullptr, &incoming));
  ASSERT_EQ(0, rpma_conn_req_delete(&incoming));
  EXPECT_EQ(RPMA_CONN_REJECTED, EventWithin(client, kSafetyTimeoutMs));
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(client, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  EXPECT_EQ(RPMA_E_NO_EVENT, rpma_conn_next_event(client, &event)) << Name(event);
  EXPECT_EQ(0, rpma_conn_disconnect(client));
  EXPECT_EQ(RPMA_E_NO_EVENT, rpma_conn_next_event(client, &event)) << Name(event);
  EXPECT_EQ(0, rpma_conn_delete(&client));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// A shared completion channel after its connection closed: the receive posted before is
// flushed, rpma_conn_wait reports the receive CQ.
TEST(LifecycleCqTest, SharedChannelReportsTheFlushedReceiveAfterClose) {
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_rcq_size(cfg, 4));
  ASSERT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg, true));
  PairOptions options;
  options.server_cfg = cfg;
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect(options));
  Registrations regs;
  Buffer* buf = regs.NewBuffer(pair.peer, 8, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair.server, buf->mr, 0, 8, Ctx(5)));
  ASSERT_EQ(0, rpma_conn_disconnect(pair.client));
  EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(pair.server, kSafetyTimeoutMs));
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair.server, &fd));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  rpma_cq* cq = nullptr;
  bool is_rcq = false;
  ASSERT_EQ(0, rpma_conn_wait(pair.server, 0, &cq, &is_rcq));
  EXPECT_TRUE(is_rcq);
  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(cq, &wc));
  EXPECT_EQ(5u, wc.wr_id);
  EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
  EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(pair.client, kSafetyTimeoutMs));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  regs.Release();
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

// The events `conn` gets up to the one that ends it (CLOSED, LOST, REJECTED, UNREACHABLE),
// each within kSafetyTimeoutMs of the one before; their names joined in *names.
std::vector<rpma_conn_event> EventsOf(rpma_conn* conn, std::string* names) {
  std::vector<rpma_conn_event> events;
  for (rpma_conn_event e; (e = EventWithin(conn, kSafetyTimeoutMs)) != RPMA_CONN_UNDEFINED;) {
    events.push_back(e);
    *names += std::string(Name(e)) + "; ";
    if (e != RPMA_CONN_ESTABLISHED) break;
  }
  return events;
}

bool Ended(const std::vector<rpma_conn_event>& events) {
  return !events.empty() && (events.back() == RPMA_CONN_CLOSED || events.back() == RPMA_CONN_LOST);
}

// The server accepted; the client disconnects at once, maybe before the answer reached it.
// Both sides see the connection end: CLOSED where the client was connected already, LOST
// where its request was still waiting for the answer (below).
TEST_F(TwoPeers, DisconnectRightAfterTheServerAcceptedEndsBothSides) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_NO_FATAL_FAILURE(RequestPending());
    ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming_));
    ASSERT_EQ(0, rpma_conn_req_connect(&incoming_, nullptr, &server_));
    ASSERT_EQ(0, rpma_conn_disconnect(client_));
    std::string c, s;
    const std::vector<rpma_conn_event> client_events = EventsOf(client_, &c);
    const std::vector<rpma_conn_event> server_events = EventsOf(server_, &s);
    EXPECT_TRUE(Ended(server_events))
        << "attempt " << i << ": server saw: " << s << " client saw: " << c;
    EXPECT_TRUE(Ended(client_events))
        << "attempt " << i << ": client saw: " << c << " server saw: " << s;
    ASSERT_EQ(0, rpma_conn_delete(&client_));
    ASSERT_EQ(0, rpma_conn_delete(&server_));
  }
}

// rpma_conn_disconnect before the server answered: rdma_disconnect moves the queue pair to
// the error state at once (librdmacm's ucma_shutdown), so the answer cannot move it on
// (RDMA_CM_EVENT_CONNECT_ERROR): the client's request ends RPMA_CONN_LOST, never
// ESTABLISHED, and the server's accepted connection ends too.
TEST_F(TwoPeers, DisconnectBeforeTheServerAnsweredEndsTheRequestLost) {
  ASSERT_NO_FATAL_FAILURE(RequestPending());
  ASSERT_EQ(0, rpma_conn_disconnect(client_));
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming_));
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming_, nullptr, &server_));
  std::string c, s;
  const std::vector<rpma_conn_event> client_events = EventsOf(client_, &c);
  EXPECT_EQ(std::vector<rpma_conn_event>{RPMA_CONN_LOST}, client_events) << "client saw: " << c;
  const std::vector<rpma_conn_event> server_events = EventsOf(server_, &s);
  EXPECT_TRUE(Ended(server_events)) << "server saw: " << s;
}

// The server side of the same: the server disconnects, or deletes, right after accepting.
// The client was still waiting for the answer, or had it: CLOSED either way.
TEST_F(TwoPeers, ServerDisconnectRightAfterAcceptClosesBothSides) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_NO_FATAL_FAILURE(RequestPending());
    ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming_));
    ASSERT_EQ(0, rpma_conn_req_connect(&incoming_, nullptr, &server_));
    ASSERT_EQ(0, rpma_conn_disconnect(server_));
    std::string c, s;
    const std::vector<rpma_conn_event> client_events = EventsOf(client_, &c);
    const std::vector<rpma_conn_event> server_events = EventsOf(server_, &s);
    EXPECT_TRUE(!client_events.empty() && client_events.back() == RPMA_CONN_CLOSED)
        << "attempt " << i << ": client saw: " << c;
    EXPECT_TRUE(!server_events.empty() && server_events.back() == RPMA_CONN_CLOSED)
        << "attempt " << i << ": server saw: " << s;
    ASSERT_EQ(0, rpma_conn_delete(&client_));
    ASSERT_EQ(0, rpma_conn_delete(&server_));
  }
}

TEST_F(TwoPeers, ServerDeleteRightAfterAcceptClosesTheClient) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_NO_FATAL_FAILURE(RequestPending());
    ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &incoming_));
    ASSERT_EQ(0, rpma_conn_req_connect(&incoming_, nullptr, &server_));
    ASSERT_EQ(0, rpma_conn_delete(&server_));
    std::string c;
    const std::vector<rpma_conn_event> client_events = EventsOf(client_, &c);
    EXPECT_TRUE(!client_events.empty() && client_events.back() == RPMA_CONN_CLOSED)
        << "attempt " << i << ": client saw: " << c;
    ASSERT_EQ(0, rpma_conn_delete(&client_));
  }
}

// Many clients at once on one endpoint: each request arrives once, the ep fd is readable
// exactly while requests wait, every connection is established and closes cleanly.
TEST_F(TwoPeers, ThirtyClientsAtOnce) {
  constexpr int kClients = 30;
  std::vector<rpma_conn*> clients(kClients, nullptr), servers(kClients, nullptr);
  for (int i = 0; i < kClients; ++i) {
    rpma_conn_req* req = nullptr;
    ASSERT_EQ(0, rpma_conn_req_new(client_peer_, kLoopback, port_.c_str(), nullptr, &req));
    uint8_t id = static_cast<uint8_t>(i);
    rpma_conn_private_data pdata = {&id, 1};
    ASSERT_EQ(0, rpma_conn_req_connect(&req, &pdata, &clients[i]));
  }
  int ep_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
  for (int n = 0; n < kClients; ++n) {
    rpma_conn_req* req = nullptr;
    ASSERT_NO_FATAL_FAILURE(NextConnReq(ep_, nullptr, &req));
    rpma_conn_private_data got = {nullptr, 0};
    ASSERT_EQ(0, rpma_conn_req_get_private_data(req, &got));
    ASSERT_EQ(1, got.len);
    int i = *static_cast<uint8_t*>(got.ptr);
    ASSERT_LT(i, kClients);
    ASSERT_EQ(nullptr, servers[i]) << "request " << i << " twice";
    ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &servers[i]));
  }
  EXPECT_FALSE(WaitReadable(ep_fd, 200)) << "ep fd readable with no request left";
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(RPMA_CONN_ESTABLISHED, EventWithin(clients[i], kSafetyTimeoutMs)) << i;
    EXPECT_EQ(RPMA_CONN_ESTABLISHED, EventWithin(servers[i], kSafetyTimeoutMs)) << i;
  }
  for (int i = 0; i < kClients; ++i) {
    ASSERT_EQ(0, rpma_conn_disconnect(i % 2 ? clients[i] : servers[i]));
  }
  for (int i = 0; i < kClients; ++i) {
    EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(clients[i], kSafetyTimeoutMs)) << i;
    EXPECT_EQ(RPMA_CONN_CLOSED, EventWithin(servers[i], kSafetyTimeoutMs)) << i;
    EXPECT_EQ(0, rpma_conn_delete(&clients[i]));
    EXPECT_EQ(0, rpma_conn_delete(&servers[i]));
  }
}

}  // namespace
