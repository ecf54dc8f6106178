// send_window_test.cc -- more bytes posted than a responder keeps for its peer (the window,
// 64 MiB over a wire: PROTOCOL.md) while nothing can be answered: the requester holds what
// does not fit, as a NIC keeps posted requests in the application's memory, and everything
// arrives, in order, once the responder takes it. Before it posts a receive, the server
// reads from the client: that answer comes behind every frame the client sent, so a
// requester that did not hold them would have lost its connection by then (the responder
// refuses a peer past the window: hostile_peer_test). In process and over shared memory
// with process_vm, large payloads are not copied at all; the same test runs there too.
//
// Behind the window also: a request whose buffer is deregistered before it leaves. Over a
// wire its bytes leave from the registered buffer itself (PROTOCOL.md, "In place"), so it
// fails as it does in one process: IBV_WC_LOC_PROT_ERR, nothing placed.
#include <gtest/gtest.h>
#include <librpma.h>

#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kMessage = 8 << 20;
constexpr int kMessages = 12;  // 96 MiB: half again the window
constexpr size_t kRead = 40 << 20;
constexpr int kReads = 2;

// Over shared memory with process_vm the responder fetches a large payload from the
// requester's process by address; a buffer deregistered but still mapped is read as it is
// (docs/differences.md).
bool FetchedByAddress() {
  const char* transport = getenv("RPMA_SIM_TRANSPORT");
  const char* process_vm = getenv("RPMA_SIM_SHM_PROCESS_VM");
  return transport != nullptr && strcmp(transport, "shm") == 0 &&
         (process_vm == nullptr || strcmp(process_vm, "0") != 0);
}

class SendWindowTest : public PairFixture {
 protected:
  void Connect() {
    rpma_conn_cfg* cfg = NewCfg();
    ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg, 32));
    ASSERT_EQ(0, rpma_conn_cfg_set_rq_size(cfg, 32));
    ASSERT_EQ(0, rpma_conn_cfg_set_cq_size(cfg, 64));
    PairOptions options;
    options.client_cfg = cfg;
    options.server_cfg = cfg;
    ASSERT_NO_FATAL_FAILURE(ConnectPair(options));
  }

  // Eight sends fill the window (seven are sent, the eighth waits in the requester); behind
  // them a send or a write from a buffer the client then deregisters. Over a wire it is
  // still in the requester when its buffer goes.
  void DeregisteredBeforeItLeaves(bool send) {
    constexpr int kFull = 8;
    Buffer* source = Source(kMessage * kFull, 3);
    ASSERT_NE(nullptr, source);
    Buffer* doomed = Source(kMessage, 9);
    ASSERT_NE(nullptr, doomed);
    Buffer* target =
        Register(kMessage * (kFull + 1), RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_WRITE_DST, 0xEE);
    ASSERT_NE(nullptr, target);
    rpma_mr_remote* remote = regs_.RemoteOf(target);
    ASSERT_NE(nullptr, remote);
    for (int i = 0; i < kFull; ++i)
      ASSERT_EQ(0, rpma_send(pair_.client, source->mr, i * kMessage, kMessage,
                             RPMA_F_COMPLETION_ALWAYS, Ctx(100 + i)));
    if (send) {
      ASSERT_EQ(
          0, rpma_send(pair_.client, doomed->mr, 0, kMessage, RPMA_F_COMPLETION_ALWAYS, Ctx(150)));
    } else {
      ASSERT_EQ(0, rpma_write(pair_.client, remote, kFull * kMessage, doomed->mr, 0, kMessage,
                              RPMA_F_COMPLETION_ALWAYS, Ctx(150)));
    }
    ASSERT_NO_FATAL_FAILURE(regs_.Deregister(&doomed->mr));

    int receives = send ? kFull + 1 : kFull;
    for (int i = 0; i < receives; ++i)
      ASSERT_EQ(0, rpma_recv(pair_.server, target->mr, i * kMessage, kMessage, Ctx(300 + i)));
    for (int i = 0; i < kFull; ++i)
      ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 300 + i, IBV_WC_SUCCESS, IBV_WC_RECV));
    for (int i = 0; i < kFull; ++i)
      ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 100 + i, IBV_WC_SEND));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 150, IBV_WC_LOC_PROT_ERR, IBV_WC_SEND));
    // The receive it would have filled is flushed; nothing of it was placed.
    if (send)
      ASSERT_NO_FATAL_FAILURE(
          ExpectCompletion(server_cq_, 300 + kFull, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));
    EXPECT_TRUE(std::equal(source->bytes.begin(), source->bytes.end(), target->bytes.begin()));
    EXPECT_TRUE(std::all_of(target->bytes.begin() + kFull * kMessage, target->bytes.end(),
                            [](uint8_t b) { return b == 0xEE; }));
  }
};

// Sends that find no receive (each waits, RNR, and everything behind it), then reads behind
// them: 96 MiB of sends and 80 MiB of reads under way before the server posts a receive.
TEST_F(SendWindowTest, RequestsPastTheWindowWaitInTheRequester) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  Buffer* source = Source(kMessage * kMessages, 3);
  ASSERT_NE(nullptr, source);
  Buffer* target = Register(kMessage * kMessages, RPMA_MR_USAGE_RECV | RPMA_MR_USAGE_READ_SRC, 0);
  ASSERT_NE(nullptr, target);
  rpma_mr_remote* remote = regs_.RemoteOf(target);
  ASSERT_NE(nullptr, remote);
  Buffer* readback = Register(kRead * kReads, RPMA_MR_USAGE_READ_DST, 0xEE);
  ASSERT_NE(nullptr, readback);

  for (int i = 0; i < kMessages; ++i)
    ASSERT_EQ(0, rpma_send(pair_.client, source->mr, i * kMessage, kMessage,
                           RPMA_F_COMPLETION_ALWAYS, Ctx(100 + i)));
  // Read what the sends will have put there: RC order executes them after the sends.
  for (int i = 0; i < kReads; ++i)
    ASSERT_EQ(0, rpma_read(pair_.client, readback->mr, i * kRead, remote, i * kRead, kRead,
                           RPMA_F_COMPLETION_ALWAYS, Ctx(200 + i)));
  // The server reads from the client: the answer comes after what the client sent.
  Buffer* probe = Register(8, RPMA_MR_USAGE_READ_SRC, 0x5C);
  ASSERT_NE(nullptr, probe);
  rpma_mr_remote* probe_remote = regs_.RemoteOf(probe);
  ASSERT_NE(nullptr, probe_remote);
  Buffer* probe_copy = Register(8, RPMA_MR_USAGE_READ_DST, 0);
  ASSERT_NE(nullptr, probe_copy);
  ASSERT_EQ(0, rpma_read(pair_.server, probe_copy->mr, 0, probe_remote, 0, 8,
                         RPMA_F_COMPLETION_ALWAYS, Ctx(500)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, 500, IBV_WC_RDMA_READ));
  EXPECT_EQ(probe->bytes, probe_copy->bytes);

  for (int i = 0; i < kMessages; ++i)
    ASSERT_EQ(0, rpma_recv(pair_.server, target->mr, i * kMessage, kMessage, Ctx(300 + i)));

  for (int i = 0; i < kMessages; ++i) {
    ibv_wc wc;
    ASSERT_NO_FATAL_FAILURE(
        ExpectCompletion(server_cq_, 300 + i, IBV_WC_SUCCESS, IBV_WC_RECV, &wc));
    EXPECT_EQ(kMessage, wc.byte_len);
  }
  for (int i = 0; i < kMessages; ++i)
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 100 + i, IBV_WC_SEND));
  for (int i = 0; i < kReads; ++i)
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 200 + i, IBV_WC_RDMA_READ));
  EXPECT_TRUE(source->bytes == target->bytes);
  EXPECT_TRUE(std::equal(readback->bytes.begin(), readback->bytes.end(), source->bytes.begin()));

  // The connection goes on: one more message, now that receives come first.
  ASSERT_NO_FATAL_FAILURE(
      PostRecvAndSend(target, 0, kMessage, 400, source, kMessage, kMessage, 401));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(400, IBV_WC_SUCCESS, 401, IBV_WC_SUCCESS));
}

TEST_F(SendWindowTest, SendWhoseBufferIsDeregisteredBeforeItLeavesFails) {
  if (FetchedByAddress()) GTEST_SKIP() << "fetched by address over shared memory";
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(DeregisteredBeforeItLeaves(true));
}

TEST_F(SendWindowTest, WriteWhoseBufferIsDeregisteredBeforeItLeavesFails) {
  if (FetchedByAddress()) GTEST_SKIP() << "fetched by address over shared memory";
  ASSERT_NO_FATAL_FAILURE(Connect());
  ASSERT_NO_FATAL_FAILURE(DeregisteredBeforeItLeaves(false));
}

}  // namespace
