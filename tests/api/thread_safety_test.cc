// thread_safety_test.cc -- librpma 1.3's thread-safety contract holds on the simulator: many
// threads each making their own peer, endpoint, connection, regions and traffic at once;
// threads sharing one peer, one endpoint (one thread takes its requests) and one receive
// completion queue (an SRQ's, polled by one thread) as librpma allows, with an epoll loop
// over every connection; and a program that breaks the contract gets a warning or a clean
// error that names the call, never a crash. Like every API test, it runs in process and
// again over tcp and over shm; the ThreadSanitizer run of CI runs it too.
#include <gtest/gtest.h>
#include <librpma.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/kept_log.h"
#include "tests/common/test_support.h"
#include "tests/integration/integration_support.h"
#include "tests/sim/sim_test_support.h"

namespace {

using integration::kSafetyTimeoutMs;

constexpr int kThreads = 8;
constexpr int kRounds = 10;
constexpr size_t kSlot = 256;

// The byte `thread` writes at `offset` in round `round`.
uint8_t PatternByte(int thread, int round, size_t offset) {
  return static_cast<uint8_t>(thread * 31 + round * 7 + offset);
}

// One thread's whole life with the simulator: its own peer, endpoint, both ends of a
// connection (the client's connect is asynchronous, so one thread can be both), regions, a
// write, a flush, a read back and a send; then everything deleted. Every result
// asserted.
void OwnPairRound(int thread, int round) {
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  rpma_ep* ep = nullptr;
  std::string port;
  ASSERT_EQ(0, integration::ListenOnFreePort(peer, &ep, &port));
  Registrations regs;
  Buffer* target = regs.NewBuffer(
      peer, kSlot,
      RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, 0);
  Buffer* source = regs.NewBuffer(
      peer, 2 * kSlot, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_SEND, 0);
  Buffer* inbox = regs.NewBuffer(peer, kSlot, RPMA_MR_USAGE_RECV, 0);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());
  for (size_t i = 0; i < kSlot; ++i) source->bytes[i] = PatternByte(thread, round, i);
  rpma_conn* client = nullptr;
  rpma_conn* server = nullptr;
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer, ep, port, PairOptions(), &client, &server));
  ASSERT_EQ(0, rpma_recv(server, inbox->mr, 0, kSlot, Ctx(4)));
  rpma_mr_remote* remote = regs.RemoteOf(target);
  ASSERT_NE(nullptr, remote);
  rpma_cq* cq = MainCq(client);
  ASSERT_EQ(
      0, rpma_write(client, remote, 0, source->mr, 0, kSlot, RPMA_F_COMPLETION_ON_ERROR, nullptr));
  ASSERT_EQ(0, rpma_flush(client, remote, 0, kSlot, RPMA_FLUSH_TYPE_VISIBILITY,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq, 1, IBV_WC_RDMA_READ));  // flush reads as a read
  ASSERT_EQ(
      0, rpma_read(client, source->mr, kSlot, remote, 0, kSlot, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq, 2, IBV_WC_RDMA_READ));
  EXPECT_EQ(0, memcmp(source->bytes.data(), source->bytes.data() + kSlot, kSlot));
  EXPECT_EQ(0, memcmp(source->bytes.data(), target->bytes.data(), kSlot));
  ASSERT_EQ(0, rpma_send(client, source->mr, 0, kSlot, RPMA_F_COMPLETION_ALWAYS, Ctx(3)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq, 3, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(server), 4, IBV_WC_RECV));
  EXPECT_EQ(0, memcmp(source->bytes.data(), inbox->bytes.data(), kSlot));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  regs.Release();
  EXPECT_EQ(0, rpma_ep_shutdown(&ep));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

TEST(ThreadSafetyTest, ThreadsEachWithTheirOwnPeerEndpointAndConnection) {
  std::vector<std::thread> threads;
  for (int thread = 0; thread < kThreads; ++thread) {
    threads.emplace_back([thread] {
      for (int round = 0; round < kRounds && !::testing::Test::HasFailure(); ++round)
        OwnPairRound(thread, round);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// ---------------------------------------------------------------------------------------------
// One peer, one endpoint, one receive CQ, many threads

// The server of SharedPeerTest: one thread takes the endpoint's requests and accepts each
// with the SRQ; one thread runs an epoll loop over every connection's event fd and the SRQ's
// receive CQ fd, counting the messages per queue pair and reposting receives, until every
// connection has closed.
class SharedServer {
 public:
  SharedServer(rpma_peer* peer, int clients) : peer_(peer), clients_(clients) {}

  void Start() {
    ASSERT_EQ(0, integration::ListenOnFreePort(peer_, &ep_, &port_));
    rpma_srq_cfg* srq_cfg = nullptr;
    ASSERT_EQ(0, rpma_srq_cfg_new(&srq_cfg));
    ASSERT_EQ(0, rpma_srq_cfg_set_rcq_size(srq_cfg, 4 * clients_));
    ASSERT_EQ(0, rpma_srq_cfg_set_rq_size(srq_cfg, 4 * clients_));
    ASSERT_EQ(0, rpma_srq_new(peer_, srq_cfg, &srq_));
    ASSERT_EQ(0, rpma_srq_cfg_delete(&srq_cfg));
    ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &rcq_));
    inbox_.assign(kSlot * 2 * clients_, 0);
    ASSERT_EQ(0, rpma_mr_reg(peer_, inbox_.data(), inbox_.size(), RPMA_MR_USAGE_RECV, &inbox_mr_));
    for (int slot = 0; slot < 2 * clients_; ++slot)
      ASSERT_EQ(0, rpma_srq_recv(srq_, inbox_mr_, slot * kSlot, kSlot, Ctx(slot)));
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(epoll_, 0);
    int fd = -1;
    ASSERT_EQ(0, rpma_cq_get_fd(rcq_, &fd));
    SetNonBlocking(fd);  // rpma_cq_wait then takes a pending event or says there is none
    Watch(fd, nullptr);
    acceptor_ = std::thread([this] { Accept(); });
  }

  const std::string& port() const { return port_; }

  // Runs the epoll loop until every client has come and gone; then deletes everything.
  void Serve() {
    acceptor_.join();
    int closed = 0;
    const long long deadline = integration::NowMs() + 3 * kSafetyTimeoutMs;
    while (closed < clients_ && integration::NowMs() < deadline && !::testing::Test::HasFailure()) {
      epoll_event ready[8];
      int n = epoll_wait(epoll_, ready, 8, kSafetyTimeoutMs);
      for (int i = 0; i < n; ++i) {
        auto* conn = static_cast<rpma_conn*>(ready[i].data.ptr);
        if (conn == nullptr) {
          TakeMessages();
          continue;
        }
        rpma_conn_event event = RPMA_CONN_UNDEFINED;
        int ret = rpma_conn_next_event(conn, &event);
        if (ret == RPMA_E_NO_EVENT) continue;
        ASSERT_EQ(0, ret);
        if (event == RPMA_CONN_ESTABLISHED) continue;
        ASSERT_EQ(RPMA_CONN_CLOSED, event);
        ++closed;
      }
    }
    EXPECT_EQ(clients_, closed);
    TakeMessages();
    for (rpma_conn*& conn : conns_) EXPECT_EQ(0, rpma_conn_delete(&conn));
    close(epoll_);
    EXPECT_EQ(0, rpma_mr_dereg(&inbox_mr_));
    EXPECT_EQ(0, rpma_srq_delete(&srq_));
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
  }

  // The message each queue pair sent (its first byte), by queue-pair number.
  const std::map<uint32_t, uint8_t>& messages() const { return messages_; }
  // The queue-pair numbers of the server's connections.
  const std::set<uint32_t>& qp_nums() const { return qp_nums_; }

 private:
  // On the acceptor thread only: the endpoint's one user.
  void Accept() {
    rpma_conn_cfg* cfg = nullptr;
    ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
    ASSERT_EQ(0, rpma_conn_cfg_set_srq(cfg, srq_));
    for (int i = 0; i < clients_; ++i) {
      rpma_conn_req* req = nullptr;
      ASSERT_NO_FATAL_FAILURE(NextConnReq(ep_, cfg, &req));
      rpma_conn* conn = nullptr;
      ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &conn));
      conns_.push_back(conn);  // read by the loop after the join
      qp_nums_.insert(QpNum(conn));
      int fd = -1;
      ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
      SetNonBlocking(fd);
      Watch(fd, conn);
    }
    EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  }

  void Watch(int fd, rpma_conn* conn) {
    epoll_event event = {};
    event.events = EPOLLIN;
    event.data.ptr = conn;
    ASSERT_EQ(0, epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event));
  }

  // Takes the CQ's event, if one is pending (which re-arms it), then every message the SRQ's
  // receive CQ holds, reposting a receive for each.
  void TakeMessages() {
    int ret = rpma_cq_wait(rcq_);
    ASSERT_TRUE(ret == 0 || ret == RPMA_E_NO_COMPLETION) << rpma_err_2str(ret);
    ibv_wc wc[4];
    int got = 0;
    while (rpma_cq_get_wc(rcq_, 4, wc, &got) == 0) {
      for (int i = 0; i < got; ++i) {
        ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status);
        ASSERT_EQ(IBV_WC_RECV, wc[i].opcode);
        size_t slot = wc[i].wr_id;
        ASSERT_LT(slot, inbox_.size() / kSlot);
        EXPECT_EQ(0u, messages_.count(wc[i].qp_num)) << "two messages from one queue pair";
        messages_[wc[i].qp_num] = inbox_[slot * kSlot];
        ASSERT_EQ(0, rpma_srq_recv(srq_, inbox_mr_, slot * kSlot, kSlot, Ctx(slot)));
      }
    }
  }

  rpma_peer* const peer_;
  const int clients_;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  rpma_srq* srq_ = nullptr;
  rpma_cq* rcq_ = nullptr;
  std::vector<uint8_t> inbox_;
  rpma_mr_local* inbox_mr_ = nullptr;
  int epoll_ = -1;
  std::thread acceptor_;
  std::vector<rpma_conn*> conns_;
  std::set<uint32_t> qp_nums_;
  std::map<uint32_t, uint8_t> messages_;
};

// A client thread on the shared peer: its own configuration, request, connection and regions;
// one message (its first byte is `tag`), then it disconnects and deletes everything.
void SharedPeerClient(rpma_peer* peer, const std::string& port, uint8_t tag) {
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg, 4));
  ASSERT_EQ(0, rpma_conn_cfg_set_timeout(cfg, kSafetyTimeoutMs));
  rpma_conn* conn = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnect(peer, port, cfg, nullptr, &conn));
  ASSERT_EQ(0, rpma_conn_cfg_delete(&cfg));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(conn, RPMA_CONN_ESTABLISHED));
  std::vector<uint8_t> message(kSlot, tag);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, message.data(), message.size(), RPMA_MR_USAGE_SEND, &mr));
  ASSERT_EQ(0, rpma_send(conn, mr, 0, kSlot, RPMA_F_COMPLETION_ALWAYS, Ctx(tag)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(conn), tag, IBV_WC_SEND));
  ASSERT_EQ(0, rpma_conn_disconnect(conn));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(conn, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_delete(&conn));
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
}

TEST(ThreadSafetyTest, ThreadsShareAPeerAnEndpointAndAReceiveQueue) {
  constexpr int kClients = 16;
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  SharedServer server(peer, kClients);
  ASSERT_NO_FATAL_FAILURE(server.Start());
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([peer, &server, i] {
      SharedPeerClient(peer, server.port(), static_cast<uint8_t>(0x40 + i));
    });
  }
  server.Serve();
  for (std::thread& client : clients) client.join();
  std::set<uint8_t> tags;
  for (const auto& message : server.messages()) tags.insert(message.second);
  EXPECT_EQ(static_cast<size_t>(kClients), tags.size()) << "each client's message, once";
  std::set<uint32_t> senders;
  for (const auto& message : server.messages()) senders.insert(message.first);
  EXPECT_EQ(server.qp_nums(), senders);
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// ---------------------------------------------------------------------------------------------
// Programs that break the contract

class ContractBrokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ForgetLoggedLines();
    ASSERT_EQ(0, rpma_log_set_function(KeepLogLine));
  }
  void TearDown() override { EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION)); }

  // Waits (safety net: kSafetyTimeoutMs) until a kept line holds `text`.
  static bool Logged(const std::string& text) {
    const long long deadline = integration::NowMs() + kSafetyTimeoutMs;
    while (LoggedLines().find(text) == std::string::npos) {
      if (integration::NowMs() > deadline) return false;
      std::this_thread::yield();
    }
    return true;
  }
};

// librpma lets one thread take an endpoint's requests: a second one at the same time is
// warned, by name, and both still get a request each.
TEST_F(ContractBrokenTest, TwoThreadsTakingOneEndpointsRequestsAreWarned) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  std::atomic<int> taken{0};
  auto take = [&] {
    rpma_conn_req* req = nullptr;
    EXPECT_EQ(0, rpma_ep_next_conn_req(pair.ep, nullptr, &req));
    EXPECT_EQ(0, rpma_conn_req_delete(&req));  // rejected
    taken.fetch_add(1);
  };
  std::thread first(take);
  std::thread second(take);
  EXPECT_TRUE(
      Logged("rpma_ep_next_conn_req: another thread is in rpma_ep_next_conn_req on the "
             "same endpoint"))
      << LoggedLines();
  for (int i = 0; i < 2; ++i) {
    rpma_conn* client = nullptr;
    ASSERT_NO_FATAL_FAILURE(ClientConnect(pair.peer, pair.port, nullptr, nullptr, &client));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_REJECTED));
    ASSERT_EQ(0, rpma_conn_delete(&client));
  }
  first.join();
  second.join();
  EXPECT_EQ(2, taken.load());
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// Once the thread `waiter_tid` names sleeps in `call` on pair.server, rpma_conn_delete of
// that connection is refused: RPMA_E_INVAL, the connection kept, a log line naming `call`.
void ExpectDeleteRefusedWhileIn(ConnectedPair& pair, const std::atomic<pid_t>& waiter_tid,
                                const std::string& call) {
  while (waiter_tid.load() == 0) std::this_thread::yield();
  ASSERT_TRUE(rpma_sim_test::WaitUntilBlockedIn(waiter_tid.load(),
                                                {SYS_read, SYS_futex, SYS_poll, SYS_ppoll}));
  rpma_conn* server = pair.server;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_delete(&server));
  EXPECT_EQ(pair.server, server) << "the connection was let go of";
  EXPECT_NE(std::string::npos, LoggedLines().find("rpma_conn_delete: another thread is still in " +
                                                  call + " on this connection"))
      << LoggedLines();
}

// A connection another thread waits on cannot be deleted: RPMA_E_INVAL, logged with both
// calls' names, and the connection goes on; once the waiter is done it can.
TEST_F(ContractBrokenTest, DeletingAConnectionAnotherThreadWaitsOnIsRefused) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  std::atomic<pid_t> waiter_tid{0};
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  std::thread waiter([&] {
    waiter_tid = rpma_sim_test::CurrentTid();
    EXPECT_EQ(0, rpma_conn_next_event(pair.server, &event));
  });
  ASSERT_NO_FATAL_FAILURE(ExpectDeleteRefusedWhileIn(pair, waiter_tid, "rpma_conn_next_event"));
  ASSERT_EQ(0, rpma_conn_disconnect(pair.client));  // the waiter's CLOSED
  waiter.join();
  EXPECT_EQ(RPMA_CONN_CLOSED, event);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair.client, RPMA_CONN_CLOSED));
  EXPECT_EQ(0, rpma_conn_delete(&pair.server));
  EXPECT_EQ(0, rpma_conn_delete(&pair.client));
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// The same for a thread in rpma_cq_wait on the connection's CQ, which lives and dies with
// the connection (rpma_conn_get_cq): deleting it would leave the waiter in freed memory.
TEST_F(ContractBrokenTest, DeletingAConnectionWhileAnotherThreadWaitsOnItsCqIsRefused) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(pair.server, &cq));
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = [](int) {};
  sigemptyset(&action.sa_mask);  // no SA_RESTART: the wait returns RPMA_E_NO_COMPLETION
  struct sigaction old;
  ASSERT_EQ(0, sigaction(SIGUSR1, &action, &old));
  std::atomic<pid_t> waiter_tid{0};
  std::atomic<int> ret{1};
  std::thread waiter([&] {
    waiter_tid = rpma_sim_test::CurrentTid();
    ret = rpma_cq_wait(cq);
  });
  ASSERT_NO_FATAL_FAILURE(ExpectDeleteRefusedWhileIn(pair, waiter_tid, "rpma_cq_wait"));
  // Interrupted, the wait returns (a signal may come before it sleeps again: until it does).
  while (ret.load() == 1) {
    pthread_kill(waiter.native_handle(), SIGUSR1);
    std::this_thread::yield();
  }
  waiter.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(RPMA_E_NO_COMPLETION, ret.load());
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// Two threads setting one connection configuration at once: a warning naming the call, and
// no data race (ThreadSanitizer runs this test); each value read back is one that was set.
TEST_F(ContractBrokenTest, TwoThreadsOnOneConfigurationAreWarned) {
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  std::atomic<bool> warned{false};
  auto set = [&](uint32_t value) {
    while (!warned.load()) {
      EXPECT_EQ(0, rpma_conn_cfg_set_cq_size(cfg, value));
      uint32_t read = 0;
      EXPECT_EQ(0, rpma_conn_cfg_get_cq_size(cfg, &read));
      EXPECT_TRUE(read == 11 || read == 22) << read;
    }
  };
  std::thread first(set, 11);
  std::thread second(set, 22);
  EXPECT_TRUE(Logged("on the same connection configuration")) << LoggedLines();
  warned = true;
  first.join();
  second.join();
  EXPECT_NE(std::string::npos, LoggedLines().find("rpma_conn_cfg_")) << LoggedLines();
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

}  // namespace
