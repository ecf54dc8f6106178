// ordering_test.cc -- RC ordering on one connection: writes before reads and sends, completions in
// posting order, sends before disconnect; a deep stream of requests (sent several per system
// call) before a sleep, behind a waiting send, and before disconnect.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <librpma.h>
#include <poll.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "tests/common/test_support.h"

namespace {

class OrderingTest : public PairFixture {
 protected:
  // Connects with sq_size 64 on the client (unsignalled writes keep their slots).
  void Connect() {
    ASSERT_NO_FATAL_FAILURE(NewCfg(&cfg_));
    ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg_, 64));
    ASSERT_EQ(0, rpma_conn_cfg_set_cq_size(cfg_, 64));
    PairOptions options;
    options.client_cfg = cfg_;
    ASSERT_NO_FATAL_FAILURE(ConnectPair(options));
  }

  // Registers a server-side target and hands it to the client through its descriptor.
  rpma_mr_remote* RemoteOf(Buffer* target) { return regs_.RemoteOf(target); }

  // Posts a send (id 1) that waits, since the server posted no receive (RNR), then `writes`
  // writes behind it that fill a `size`-byte target from a source of `fill` bytes, the last
  // signalled (ids 2, 3, ...). Registers the target, the source and a server-side inbox for
  // the receive that lets the send go.
  void PostWritesBehindAWaitingSend(size_t size, size_t writes, uint8_t fill, Buffer** target,
                                    Buffer** src, Buffer** inbox);

  rpma_conn_cfg* cfg_ = nullptr;
};

constexpr int kTargetUsage =
    RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

void OrderingTest::PostWritesBehindAWaitingSend(size_t size, size_t writes, uint8_t fill,
                                                Buffer** target, Buffer** src, Buffer** inbox) {
  *target = Register(size, kTargetUsage, 0);
  rpma_mr_remote* remote = RemoteOf(*target);
  *src = Register(size, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND, fill);
  *inbox = Register(8, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_send(pair_.client, (*src)->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  const size_t each = size / writes;
  for (size_t k = 0; k < writes; ++k)
    ASSERT_EQ(0, rpma_write(pair_.client, remote, k * each, (*src)->mr, k * each, each,
                            k + 1 == writes ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
                            Ctx(k + 2)));
}

// Unsignalled, overlapping writes, then a read of the whole range: the read returns the
// bytes of every write, applied in posting order.
TEST_F(OrderingTest, WritesThenReadReturnWrittenBytes) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* target = Register(256, kTargetUsage, 0);
  rpma_mr_remote* remote = RemoteOf(target);
  Buffer* readback = Register(256, RPMA_MR_USAGE_READ_DST, 0xEE);
  constexpr int kWrites = 16;
  std::vector<Buffer*> sources;
  std::vector<uint8_t> expected(256, 0);
  for (int k = 0; k < kWrites; ++k) {
    Buffer* src = Register(128, RPMA_MR_USAGE_WRITE_SRC, 0);
    for (size_t i = 0; i < 128; ++i) src->bytes[i] = static_cast<uint8_t>(k * 16 + i);
    sources.push_back(src);
    size_t offset = static_cast<size_t>(k) * 8;  // each write overlaps the previous ones
    memcpy(&expected[offset], src->bytes.data(), 128);
    ASSERT_EQ(0, rpma_write(pair_.client, remote, offset, src->mr, 0, 128,
                            RPMA_F_COMPLETION_ON_ERROR, Ctx(k + 1)));
  }
  ASSERT_EQ(0, rpma_read(pair_.client, readback->mr, 0, remote, 0, 256, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(100)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 100, IBV_WC_SUCCESS, IBV_WC_RDMA_READ));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(expected, readback->bytes);
  EXPECT_EQ(expected, target->bytes);
}

// Eight signalled operations of every kind complete in posting order.
TEST_F(OrderingTest, SignalledCompletionsComeInPostingOrder) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* target = Register(64, kTargetUsage, 0);
  rpma_mr_remote* remote = RemoteOf(target);
  Buffer* src = Register(64, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND, 0x33);
  Buffer* local = Register(64, RPMA_MR_USAGE_READ_DST, 0);
  Buffer* inbox = Register(32, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 16, Ctx(501)));
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 16, 16, Ctx(502)));
  const char atomic_value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const int kAlways = RPMA_F_COMPLETION_ALWAYS;

  ASSERT_EQ(0, rpma_write(pair_.client, remote, 0, src->mr, 0, 16, kAlways, Ctx(1)));
  ASSERT_EQ(0, rpma_read(pair_.client, local->mr, 0, remote, 0, 16, kAlways, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, kAlways, Ctx(3)));
  ASSERT_EQ(0,
            rpma_flush(pair_.client, remote, 0, 16, RPMA_FLUSH_TYPE_VISIBILITY, kAlways, Ctx(4)));
  ASSERT_EQ(0, rpma_write(pair_.client, remote, 16, src->mr, 16, 16, kAlways, Ctx(5)));
  ASSERT_EQ(0, rpma_send_with_imm(pair_.client, src->mr, 0, 8, kAlways, 99, Ctx(6)));
  ASSERT_EQ(0, rpma_read(pair_.client, local->mr, 16, remote, 16, 16, kAlways, Ctx(7)));
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, remote, 32, atomic_value, kAlways, Ctx(8)));

  // The portable (default) device completes a flush as a read and an atomic write as a write.
  const ibv_wc_opcode expected[] = {IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,  IBV_WC_SEND,
                                    IBV_WC_RDMA_READ,  IBV_WC_RDMA_WRITE, IBV_WC_SEND,
                                    IBV_WC_RDMA_READ,  IBV_WC_RDMA_WRITE};
  for (uint64_t k = 1; k <= 8; ++k) {
    SCOPED_TRACE(k);
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, k, IBV_WC_SUCCESS, expected[k - 1]));
  }
  ExpectNoCompletion(client_cq_);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 501, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 502, IBV_WC_SUCCESS, IBV_WC_RECV));
  EXPECT_EQ(0, memcmp(local->bytes.data(), src->bytes.data(), 32));
  EXPECT_EQ(0, memcmp(&target->bytes[32], atomic_value, 8));
}

// A send posted after writes is received only once the written bytes are in the target's
// memory; repeated with fresh bytes each round.
TEST_F(OrderingTest, SendAfterWritesSeesWrittenBytes) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* target = Register(512, kTargetUsage, 0);
  rpma_mr_remote* remote = RemoteOf(target);
  Buffer* inbox = Register(8, RPMA_MR_USAGE_RECV, 0);
  Buffer* note = Register(8, RPMA_MR_USAGE_SEND, 0x77);
  constexpr int kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE(round);
    Buffer* src = Register(512, RPMA_MR_USAGE_WRITE_SRC, 0);
    for (size_t i = 0; i < 512; ++i) src->bytes[i] = static_cast<uint8_t>(round * 31 + i * 3);
    ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 8, Ctx(round)));
    for (size_t chunk = 0; chunk < 4; ++chunk)
      ASSERT_EQ(0, rpma_write(pair_.client, remote, chunk * 128, src->mr, chunk * 128, 128,
                              RPMA_F_COMPLETION_ON_ERROR, Ctx(chunk)));
    ASSERT_EQ(0, rpma_send(pair_.client, note->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(1000)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, round, IBV_WC_SUCCESS, IBV_WC_RECV));
    EXPECT_EQ(src->bytes, target->bytes);
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1000, IBV_WC_SUCCESS, IBV_WC_SEND));
  }
  ExpectNoCompletion(client_cq_);
}

// Nothing overtakes a send that waits for a receive (RNR): a write posted behind it is not
// executed, and does not complete, until the send went through.
TEST_F(OrderingTest, WriteBehindWaitingSendWaitsToo) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer *target, *src, *inbox;
  ASSERT_NO_FATAL_FAILURE(PostWritesBehindAWaitingSend(64, 1, 0x6B, &target, &src, &inbox));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(std::vector<uint8_t>(64, 0), target->bytes);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 8, Ctx(3)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 3, IBV_WC_SUCCESS, IBV_WC_RECV));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_SUCCESS, IBV_WC_SEND));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(src->bytes, target->bytes);
}

// A send posted right before rpma_conn_disconnect is delivered before CLOSED is reported;
// a receive still posted behind it is flushed.
TEST_F(OrderingTest, SendBeforeDisconnectIsDeliveredBeforeClosed) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* msg = Register(16, RPMA_MR_USAGE_SEND, 0x42);
  Buffer* inbox = Register(32, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 16, Ctx(1)));
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 16, 16, Ctx(2)));
  ASSERT_EQ(0, rpma_send(pair_.client, msg->mr, 0, 16, RPMA_F_COMPLETION_ON_ERROR, Ctx(3)));
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_CLOSED));
  // Already there when CLOSED is seen: a single poll, no waiting.
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  ASSERT_EQ(0, rpma_cq_get_wc(server_cq_, 1, &wc, nullptr));
  EXPECT_EQ(1u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(IBV_WC_RECV, wc.opcode);
  EXPECT_EQ(16u, wc.byte_len);
  EXPECT_EQ(0, memcmp(inbox->bytes.data(), msg->bytes.data(), 16));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
  ExpectNoCompletion(server_cq_);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_CLOSED));
  ExpectNoCompletion(client_cq_);  // the send succeeded and was not signalled
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.server));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.client));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.server));
}

// The same with a signalled send_with_imm behind a write: the sender sees success, not a flush.
TEST_F(OrderingTest, WriteAndSendWithImmBeforeDisconnect) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* target = Register(64, kTargetUsage, 0);
  rpma_mr_remote* remote = RemoteOf(target);
  Buffer* src = Register(64, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND, 0x5C);
  Buffer* inbox = Register(16, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 16, Ctx(1)));
  ASSERT_EQ(
      0, rpma_write(pair_.client, remote, 0, src->mr, 0, 64, RPMA_F_COMPLETION_ON_ERROR, Ctx(2)));
  ASSERT_EQ(
      0, rpma_send_with_imm(pair_.client, src->mr, 0, 4, RPMA_F_COMPLETION_ALWAYS, 0xD1, Ctx(3)));
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_CLOSED));
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  ASSERT_EQ(0, rpma_cq_get_wc(server_cq_, 1, &wc, nullptr));
  EXPECT_EQ(1u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(4u, wc.byte_len);
  EXPECT_EQ(0xD1u, ntohl(wc.imm_data));
  EXPECT_EQ(src->bytes, target->bytes);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 3, IBV_WC_SUCCESS, IBV_WC_SEND));
  ExpectNoCompletion(client_cq_);
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.server));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.client));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.server));
}

// Takes the next completion of `cq` as an application that sleeps until it comes does: it
// waits on the completion fd (30 s at most), then rpma_cq_wait and rpma_cq_get_wc, without
// polling before. (The queue must be empty and armed.)
void WaitOnFd(rpma_cq* cq, ibv_wc* wc) {
  int fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(cq, &fd));
  for (;;) {
    pollfd ready{fd, POLLIN, 0};
    ASSERT_EQ(1, poll(&ready, 1, 30000)) << "no completion event in 30 s";
    ASSERT_EQ(0, rpma_cq_wait(cq));
    memset(wc, 0, sizeof(*wc));
    // (An event may announce a completion taken already.)
    if (rpma_cq_get_wc(cq, 1, wc, nullptr) == 0) return;
  }
}

// Deep in a stream of requests the requester sends several per system call, when it next
// writes or reads the connection: an application that posts 60 and then sleeps on the
// completion fd still gets all of them executed, in order.
TEST_F(OrderingTest, ADeepStreamCompletesForAnApplicationThatSleeps) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* target = Register(480, kTargetUsage, 0);
  rpma_mr_remote* remote = RemoteOf(target);
  Buffer* src = Register(480, RPMA_MR_USAGE_WRITE_SRC, 0);
  for (size_t i = 0; i < src->bytes.size(); ++i) src->bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  Buffer* readback = Register(480, RPMA_MR_USAGE_READ_DST, 0);
  for (size_t k = 0; k < 60; ++k)
    ASSERT_EQ(0, rpma_write(pair_.client, remote, k * 8, src->mr, k * 8, 8,
                            RPMA_F_COMPLETION_ON_ERROR, Ctx(k)));
  ASSERT_EQ(0, rpma_read(pair_.client, readback->mr, 0, remote, 0, 480, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(100)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(WaitOnFd(client_cq_, &wc));
  EXPECT_EQ(100u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(src->bytes, readback->bytes);
  ExpectNoCompletion(client_cq_);
}

// The same 30 writes behind a send that waits for a receive (RNR): they go once it did.
TEST_F(OrderingTest, ADeepStreamBehindAWaitingSendGoesOnceItDid) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer *target, *src, *inbox;
  ASSERT_NO_FATAL_FAILURE(PostWritesBehindAWaitingSend(240, 30, 0x3C, &target, &src, &inbox));
  ExpectNoCompletion(client_cq_);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 8, Ctx(50)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(WaitOnFd(client_cq_, &wc));
  EXPECT_EQ(1u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SEND, wc.opcode);
  // (It may have come with the first event: taken as an application does after a wait.)
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 31, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(src->bytes, target->bytes);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 50, IBV_WC_SUCCESS, IBV_WC_RECV));
}

// 40 unsignalled writes and a send right before rpma_conn_disconnect: the receiver sees
// every written byte with the send, before CLOSED.
TEST_F(OrderingTest, ADeepStreamBeforeDisconnectArrivesWhole) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* target = Register(320, kTargetUsage, 0);
  rpma_mr_remote* remote = RemoteOf(target);
  Buffer* src = Register(320, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND, 0);
  for (size_t i = 0; i < src->bytes.size(); ++i) src->bytes[i] = static_cast<uint8_t>(i + 9);
  Buffer* inbox = Register(8, RPMA_MR_USAGE_RECV, 0);
  ASSERT_EQ(0, rpma_recv(pair_.server, inbox->mr, 0, 8, Ctx(1)));
  for (size_t k = 0; k < 40; ++k)
    ASSERT_EQ(0, rpma_write(pair_.client, remote, k * 8, src->mr, k * 8, 8,
                            RPMA_F_COMPLETION_ON_ERROR, Ctx(k + 2)));
  ASSERT_EQ(0, rpma_send(pair_.client, src->mr, 0, 8, RPMA_F_COMPLETION_ON_ERROR, Ctx(50)));
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.client));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_CLOSED));
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  ASSERT_EQ(0, rpma_cq_get_wc(server_cq_, 1, &wc, nullptr));  // there already
  EXPECT_EQ(1u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(src->bytes, target->bytes);
  ASSERT_EQ(0, rpma_conn_disconnect(pair_.server));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.client));
  ASSERT_EQ(0, rpma_conn_delete(&pair_.server));
}

}  // namespace
