// channel_test.cc -- completion channels (ibverbs arm/ack model): rpma_cq_get_fd, rpma_cq_wait,
// rpma_conn_get_compl_fd, rpma_conn_wait.
#include <gtest/gtest.h>
#include <librpma.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "tests/common/test_support.h"

namespace {

int CqFd(rpma_cq* cq) {
  int fd = -1;
  EXPECT_EQ(0, rpma_cq_get_fd(cq, &fd));
  return fd;
}

class ChannelTest : public PairFixture {
 protected:
  // Connects; the client's connection uses `rcq_size` and `shared` (the server the defaults).
  // The server posts `server_receives` 8-byte receives (wr_id 1000 + i).
  void Connect(uint32_t rcq_size, bool shared, int server_receives = 8) {
    ASSERT_NO_FATAL_FAILURE(NewCfg(&client_cfg_));
    ASSERT_EQ(0, rpma_conn_cfg_set_rcq_size(client_cfg_, rcq_size));
    ASSERT_EQ(0, rpma_conn_cfg_set_compl_channel(client_cfg_, shared));
    ASSERT_NO_FATAL_FAILURE(NewCfg(&server_cfg_));
    ASSERT_EQ(0, rpma_conn_cfg_set_rq_size(server_cfg_, 32));
    ASSERT_EQ(0, rpma_conn_cfg_set_rcq_size(server_cfg_, 32));  // server_cq_ only gets sends
    PairOptions options;
    options.client_cfg = client_cfg_;
    options.server_cfg = server_cfg_;
    ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
    ASSERT_EQ(0, rpma_conn_get_cq(pair_.client, &cq_));
    ASSERT_EQ(0, rpma_conn_get_rcq(pair_.client, &rcq_));
    ASSERT_EQ(0, rpma_conn_get_cq(pair_.server, &server_cq_));
    ASSERT_EQ(0, rpma_conn_get_rcq(pair_.server, &server_rcq_));
    ASSERT_NE(nullptr, server_rcq_);
    src_ = Register(8, RPMA_MR_USAGE_SEND, 0x5A);
    dst_ = Register(8 * 32, RPMA_MR_USAGE_RECV, 0);
    for (int i = 0; i < server_receives; ++i)
      ASSERT_EQ(0, rpma_recv(pair_.server, dst_->mr, 8 * i, 8, Ctx(1000 + i)));
  }

  // The client sends one signalled message: one completion on the client's main CQ.
  void ClientSend(uintptr_t wr_id) {
    ASSERT_EQ(0, rpma_send(pair_.client, src_->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(wr_id)));
  }

  // The client posts a receive and the server sends into it: one completion on the client's
  // receive CQ (or main CQ without one). The server's send completion is drained.
  void ServerSendsToClient(uintptr_t wr_id) {
    ASSERT_EQ(0, rpma_recv(pair_.client, dst_->mr, 0, 8, Ctx(wr_id)));
    ASSERT_EQ(0, rpma_send(pair_.server, src_->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(7)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 7, IBV_WC_SEND));
  }

  rpma_conn_cfg* client_cfg_ = nullptr;
  rpma_conn_cfg* server_cfg_ = nullptr;
  rpma_cq* cq_ = nullptr;
  rpma_cq* rcq_ = nullptr;
  rpma_cq* server_rcq_ = nullptr;
  Buffer* src_ = nullptr;
  Buffer* dst_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// One channel per CQ: rpma_cq_get_fd and rpma_cq_wait
// ---------------------------------------------------------------------------------------------

// The CQ is armed at creation: the first completion makes the fd readable.
TEST_F(ChannelTest, FdReadableAfterCompletion) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int fd = CqFd(cq_);
  EXPECT_FALSE(IsReadableNow(fd));
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  EXPECT_TRUE(IsReadableNow(fd));  // level-triggered: still readable until consumed
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  EXPECT_FALSE(IsReadableNow(fd));
  // The wait consumed the event, not the completion.
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
  ExpectNoCompletion(cq_);
}

// One event per arm: a second completion before the re-arm adds no event; after the wait
// re-armed the CQ, the next completion produces one.
TEST_F(ChannelTest, OneEventPerArm) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int fd = CqFd(cq_);
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ClientSend(2));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 2, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  EXPECT_FALSE(IsReadableNow(fd)) << "the second completion produced a second event";
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq_));
  // Re-armed by the wait: the next completion signals.
  ASSERT_NO_FATAL_FAILURE(ClientSend(3));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  EXPECT_FALSE(IsReadableNow(fd));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 3, IBV_WC_SEND));
}

// Without a wait nothing re-arms the CQ: later completions stay silent.
TEST_F(ChannelTest, NoRearmWithoutWait) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int fd = CqFd(cq_);
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  ASSERT_EQ(0, rpma_cq_wait(cq_));  // consumes and re-arms
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ClientSend(2));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  // Drain without waiting: the CQ stays disarmed, so more completions add no event.
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 2, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ClientSend(3));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 3, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ClientSend(4));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 4, IBV_WC_SEND));
  ASSERT_EQ(0, rpma_cq_wait(cq_));  // the one pending event (for completion 2)
  EXPECT_FALSE(IsReadableNow(fd));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq_));
}

// An event stays pending after its completion was drained: the wait succeeds and
// rpma_cq_get_wc then finds nothing (the documented spurious event).
TEST_F(ChannelTest, EventOutlivesDrainedCompletion) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int fd = CqFd(cq_);
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  ExpectNoCompletion(cq_);
}

TEST_F(ChannelTest, NonBlockingWaitWithoutEventReturnsAtOnce) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int fd = CqFd(cq_);
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq_));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_wait(cq_));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
  // The CQ is still armed: a completion now signals.
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  EXPECT_EQ(0, rpma_cq_wait(cq_));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
}

// A blocking wait returns once a completion arrives from another thread.
TEST_F(ChannelTest, BlockingWaitWakesOnCompletion) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int fd = CqFd(cq_);
  std::thread sender([this] { ClientSend(1); });
  // Safety net against a hang: only enter the blocking wait once the fd is readable.
  bool readable = WaitReadable(fd, kSafetyTimeoutMs);
  sender.join();
  ASSERT_TRUE(readable);
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
}

// A separate receive CQ has its own channel: a receive signals on the RCQ fd only.
TEST_F(ChannelTest, RcqHasItsOwnChannel) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, false));
  ASSERT_NE(nullptr, rcq_);
  int cq_fd = CqFd(cq_);
  int rcq_fd = CqFd(rcq_);
  ASSERT_NE(cq_fd, rcq_fd);
  ASSERT_NO_FATAL_FAILURE(ServerSendsToClient(5));
  ASSERT_TRUE(WaitReadable(rcq_fd, kSafetyTimeoutMs));
  EXPECT_FALSE(IsReadableNow(cq_fd));
  ASSERT_EQ(0, rpma_cq_wait(rcq_));
  EXPECT_FALSE(IsReadableNow(rcq_fd));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(rcq_, 5, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ClientSend(6));
  ASSERT_TRUE(WaitReadable(cq_fd, kSafetyTimeoutMs));
  EXPECT_FALSE(IsReadableNow(rcq_fd));
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 6, IBV_WC_SEND));
}

TEST_F(ChannelTest, CqFdWorksWithEpoll) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  int fd = CqFd(cq_);
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(epfd, 0);
  epoll_event event;
  memset(&event, 0, sizeof(event));
  event.events = EPOLLIN;
  event.data.u64 = 0xC0FFEE;
  ASSERT_EQ(0, epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event));
  epoll_event ready[2];
  EXPECT_EQ(0, epoll_wait(epfd, ready, 2, 0));
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_EQ(1, epoll_wait(epfd, ready, 2, kSafetyTimeoutMs));
  EXPECT_NE(0u, ready[0].events & EPOLLIN);
  EXPECT_EQ(0xC0FFEEu, ready[0].data.u64);
  // Level-triggered: reported again until the event is consumed.
  EXPECT_EQ(1, epoll_wait(epfd, ready, 2, 0));
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  EXPECT_EQ(0, epoll_wait(epfd, ready, 2, 0));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
  // Re-armed: the next completion is reported again.
  ASSERT_NO_FATAL_FAILURE(ClientSend(2));
  ASSERT_EQ(1, epoll_wait(epfd, ready, 2, kSafetyTimeoutMs));
  ASSERT_EQ(0, rpma_cq_wait(cq_));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 2, IBV_WC_SEND));
  close(epfd);
}

// rpma_cq_get_wc with num_entries 5 returns what is there, several at once.
TEST_F(ChannelTest, GetWcReturnsSeveralCompletionsAtOnce) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  for (uintptr_t i = 1; i <= 5; ++i) ASSERT_NO_FATAL_FAILURE(ClientSend(i));
  // Every message arrived at the server before polling the client.
  for (uintptr_t i = 0; i < 5; ++i)
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_rcq_, 1000 + i, IBV_WC_RECV));
  ibv_wc wc[5];
  int total = 0;
  int most_in_one_call = 0;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kSafetyTimeoutMs);
  while (total < 5) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    memset(wc, 0, sizeof(wc));
    int got = -1;
    int ret = rpma_cq_get_wc(cq_, 5, wc, &got);
    if (ret == RPMA_E_NO_COMPLETION) {
      std::this_thread::yield();
      continue;
    }
    ASSERT_EQ(0, ret);
    ASSERT_GE(got, 1);
    ASSERT_LE(got, 5 - total);
    for (int i = 0; i < got; ++i) {
      EXPECT_EQ(static_cast<uint64_t>(total + i + 1), wc[i].wr_id);
      EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
      EXPECT_EQ(IBV_WC_SEND, wc[i].opcode);
    }
    total += got;
    if (got > most_in_one_call) most_in_one_call = got;
  }
  EXPECT_GT(most_in_one_call, 1);
  int got = -1;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq_, 5, wc, &got));
}

// ---------------------------------------------------------------------------------------------
// Shared channel: rpma_conn_get_compl_fd and rpma_conn_wait
// ---------------------------------------------------------------------------------------------

TEST_F(ChannelTest, SharedChannelRefusesCqWait) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  ASSERT_NE(nullptr, rcq_);
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));  // a wrongly waiting rpma_cq_wait cannot hang
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(cq_));
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(rcq_));
  // Also with an event pending, and the event is left for rpma_conn_wait.
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(cq_));
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(rcq_));
  EXPECT_TRUE(IsReadableNow(fd));
  rpma_cq* fired = nullptr;
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, nullptr));
  EXPECT_EQ(cq_, fired);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
}

TEST_F(ChannelTest, ComplFdIsTheFdOfBothCqs) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  ASSERT_NE(nullptr, rcq_);
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  EXPECT_EQ(fd, CqFd(cq_));
  EXPECT_EQ(fd, CqFd(rcq_));
  EXPECT_FALSE(IsReadableNow(fd));
  ASSERT_NO_FATAL_FAILURE(ServerSendsToClient(3));
  EXPECT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
}

TEST_F(ChannelTest, ConnWaitReportsWhichCqFired) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  ASSERT_NE(nullptr, rcq_);
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));

  // A send completion: the main CQ.
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  rpma_cq* fired = nullptr;
  bool is_rcq = true;
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, &is_rcq));
  EXPECT_EQ(cq_, fired);
  EXPECT_FALSE(is_rcq);
  EXPECT_FALSE(IsReadableNow(fd));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
  ExpectNoCompletion(rcq_);

  // A receive completion: the RCQ.
  ASSERT_NO_FATAL_FAILURE(ServerSendsToClient(2));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  fired = nullptr;
  is_rcq = false;
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, &is_rcq));
  EXPECT_EQ(rcq_, fired);
  EXPECT_TRUE(is_rcq);
  EXPECT_FALSE(IsReadableNow(fd));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(rcq_, 2, IBV_WC_RECV));
  ExpectNoCompletion(cq_);

  // Both CQs were re-armed by their waits; is_rcq may be NULL.
  ASSERT_NO_FATAL_FAILURE(ClientSend(3));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  fired = nullptr;
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, nullptr));
  EXPECT_EQ(cq_, fired);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 3, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ServerSendsToClient(4));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  fired = nullptr;
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, nullptr));
  EXPECT_EQ(rcq_, fired);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(rcq_, 4, IBV_WC_RECV));
}

// A send and then a receive both complete before anyone waits: two events, the send's first.
TEST_F(ChannelTest, ConnWaitReturnsBothEventsInOrder) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  ASSERT_NE(nullptr, rcq_);
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  ASSERT_NO_FATAL_FAILURE(ClientSend(1));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_rcq_, 1000, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ServerSendsToClient(2));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(rcq_, 2, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_SEND));
  rpma_cq* fired = nullptr;
  bool is_rcq = true;
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, &is_rcq));
  EXPECT_EQ(cq_, fired);
  EXPECT_FALSE(is_rcq);
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, &is_rcq));
  EXPECT_EQ(rcq_, fired);
  EXPECT_TRUE(is_rcq);
  EXPECT_FALSE(IsReadableNow(fd));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_conn_wait(pair_.client, 0, &fired, &is_rcq));
}

TEST_F(ChannelTest, ConnWaitNonBlockingWithoutEvent) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  ASSERT_NO_FATAL_FAILURE(SetNonBlocking(fd));
  rpma_cq* fired = nullptr;
  bool is_rcq = false;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_conn_wait(pair_.client, 0, &fired, &is_rcq));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_conn_wait(pair_.client, 0, &fired, nullptr));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1000));
}

TEST_F(ChannelTest, SharedChannelWithoutRcq) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, true));
  EXPECT_EQ(nullptr, rcq_);
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  EXPECT_EQ(fd, CqFd(cq_));
  EXPECT_EQ(RPMA_E_SHARED_CHANNEL, rpma_cq_wait(cq_));
  // Receives go to the main CQ, and rpma_conn_wait names it.
  ASSERT_NO_FATAL_FAILURE(ServerSendsToClient(1));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));
  rpma_cq* fired = nullptr;
  bool is_rcq = true;
  ASSERT_EQ(0, rpma_conn_wait(pair_.client, 0, &fired, &is_rcq));
  EXPECT_EQ(cq_, fired);
  EXPECT_FALSE(is_rcq);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq_, 1, IBV_WC_RECV));
}

TEST_F(ChannelTest, NotSharedChannel) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, false));
  int fd = -1;
  EXPECT_EQ(RPMA_E_NOT_SHARED_CHNL, rpma_conn_get_compl_fd(pair_.client, &fd));
  rpma_cq* fired = nullptr;
  EXPECT_EQ(RPMA_E_NOT_SHARED_CHNL, rpma_conn_wait(pair_.client, 0, &fired, nullptr));
}

// A signal interrupts a blocking wait: ibv_get_cq_event's read() fails with EINTR when the
// handler has no SA_RESTART, and librpma returns RPMA_E_NO_COMPLETION.

void NoteSignal(int) {}

// Runs `wait` (a blocking wait, with nothing to wake it) on a thread of its own and sends that
// thread SIGUSR1 (handler without SA_RESTART) until the wait returns or 5 s passed; if it did
// not return, `unblock` makes it. Expects that a signal made it return, with `expected`.
void ExpectInterruptedBySignal(const char* call, const std::function<int()>& wait,
                               const std::function<void()>& unblock, int expected) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = NoteSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking read() fails with EINTR
  struct sigaction old;
  ASSERT_EQ(0, sigaction(SIGUSR1, &action, &old));
  std::promise<int> result;
  std::future<int> done = result.get_future();
  std::thread waiter([&] { result.set_value(wait()); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  bool by_signal = false;
  while (!by_signal && std::chrono::steady_clock::now() < deadline) {
    pthread_kill(waiter.native_handle(), SIGUSR1);
    by_signal = done.wait_for(std::chrono::milliseconds(10)) == std::future_status::ready;
  }
  if (!by_signal) unblock();
  EXPECT_EQ(std::future_status::ready, done.wait_for(std::chrono::milliseconds(kSafetyTimeoutMs)));
  int ret = done.get();
  waiter.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_TRUE(by_signal) << call << " ignored the signal and kept waiting";
  EXPECT_EQ(expected, ret) << call;
}

TEST_F(ChannelTest, SignalInterruptsBlockingCqWait) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  (void)CqFd(cq_);  // the fd exists, as it always does in librpma
  ExpectInterruptedBySignal(
      "rpma_cq_wait", [this] { return rpma_cq_wait(cq_); }, [this] { ClientSend(1); },
      RPMA_E_NO_COMPLETION);
}

TEST_F(ChannelTest, SignalInterruptsBlockingCqWaitWithoutFdAskedFor) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  ExpectInterruptedBySignal(
      "rpma_cq_wait", [this] { return rpma_cq_wait(cq_); }, [this] { ClientSend(1); },
      RPMA_E_NO_COMPLETION);
}

// rdma_get_cm_event fails with EINTR too, which librpma returns as RPMA_E_PROVIDER (only
// ENODATA is RPMA_E_NO_EVENT).
TEST_F(ChannelTest, SignalInterruptsBlockingConnNextEventAsProvider) {
  ASSERT_NO_FATAL_FAILURE(Connect(0, false));
  enum rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ExpectInterruptedBySignal(
      "rpma_conn_next_event", [&] { return rpma_conn_next_event(pair_.client, &event); },
      [this] { (void)rpma_conn_disconnect(pair_.server); }, RPMA_E_PROVIDER);
  EXPECT_EQ(RPMA_CONN_UNDEFINED, event);
}

TEST_F(ChannelTest, SignalInterruptsBlockingConnWait) {
  ASSERT_NO_FATAL_FAILURE(Connect(4, true));
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_compl_fd(pair_.client, &fd));
  rpma_cq* fired = nullptr;
  ExpectInterruptedBySignal(
      "rpma_conn_wait", [&] { return rpma_conn_wait(pair_.client, 0, &fired, nullptr); },
      [this] { ClientSend(1); }, RPMA_E_NO_COMPLETION);
}

}  // namespace
