// stress_test.cc -- thread safety of the data path: concurrent writers on one connection,
// concurrent ping-pong on four connections.
#include <gtest/gtest.h>
#include <librpma.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "tests/common/test_support.h"

namespace {

using Clock = std::chrono::steady_clock;

// WaitWc for one completion; false (with a failure recorded) if none came. Usable from any
// thread.
bool PollInThread(rpma_cq* cq, ibv_wc* wc) {
  int ret = WaitWc(cq, wc);
  if (ret == RPMA_E_NO_COMPLETION) {
    ADD_FAILURE() << "no completion arrived";
  } else if (ret != 0) {
    ADD_FAILURE() << "rpma_cq_get_wc: " << rpma_err_2str(ret);
  }
  return ret == 0;
}

// Polls one completion and checks it; false on any mismatch.
bool CheckCompletion(rpma_cq* cq, uint64_t wr_id, ibv_wc_opcode opcode, uint32_t* byte_len) {
  ibv_wc wc;
  if (!PollInThread(cq, &wc)) return false;
  EXPECT_EQ(wr_id, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(opcode, wc.opcode);
  if (byte_len != nullptr) *byte_len = wc.byte_len;
  return wc.wr_id == wr_id && wc.status == IBV_WC_SUCCESS && wc.opcode == opcode;
}

void Register(rpma_peer* peer, Buffer* buffer, size_t size, int usage) {
  buffer->bytes.assign(size, 0);
  ASSERT_EQ(0, rpma_mr_reg(peer, buffer->bytes.data(), size, usage, &buffer->mr));
}

// ---------------------------------------------------------------------------------------------
// Four threads writing on one connection
// ---------------------------------------------------------------------------------------------

constexpr int kWriters = 4;
constexpr size_t kSlice = 64 * 1024;
constexpr size_t kChunk = 1024;
constexpr size_t kChunksPerWriter = kSlice / kChunk;
constexpr size_t kTotalWrites = kWriters * kChunksPerWriter;

// The byte a writer puts at `offset` of its slice: distinct per writer and per chunk.
uint8_t WriterByte(int writer, size_t offset) {
  return static_cast<uint8_t>((writer + 1) * 59 + (offset / kChunk) * 17 + offset);
}

class ConcurrentWritersTest : public ::testing::TestWithParam<uint32_t> {};

// Every writer posts its chunks with RPMA_F_COMPLETION_ALWAYS and retries on RPMA_E_PROVIDER
// (send queue full) while a poller thread drains the one CQ all completions land on.
TEST_P(ConcurrentWritersTest, EveryByteAndEveryCompletionArrives) {
  const uint32_t sq_size = GetParam();
  ConnectedPair pair;
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg, sq_size));
  ASSERT_EQ(0, rpma_conn_cfg_set_cq_size(cfg, 1024));
  PairOptions options;
  options.client_cfg = cfg;
  ASSERT_NO_FATAL_FAILURE(pair.Connect(options));

  Buffer target;
  Buffer source;
  ASSERT_NO_FATAL_FAILURE(Register(pair.peer, &target, kWriters * kSlice, RPMA_MR_USAGE_WRITE_DST));
  ASSERT_NO_FATAL_FAILURE(Register(pair.peer, &source, kWriters * kSlice, RPMA_MR_USAGE_WRITE_SRC));
  for (int w = 0; w < kWriters; ++w)
    for (size_t i = 0; i < kSlice; ++i) source.bytes[w * kSlice + i] = WriterByte(w, i);
  rpma_mr_remote* remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(RemoteFromDescriptor(target.mr, &remote));
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(pair.client, &cq));

  std::atomic<bool> stop{false};
  std::atomic<size_t> successes{0};
  std::atomic<size_t> retries{0};
  std::vector<std::atomic<int>> seen(kTotalWrites + 1);
  for (auto& count : seen) count.store(0);

  std::thread poller([&] {
    const auto deadline = Clock::now() + std::chrono::milliseconds(3 * kSafetyTimeoutMs);
    size_t polled = 0;
    ibv_wc wc[16];
    while (polled < kTotalWrites && !stop.load()) {
      int got = 0;
      int ret = rpma_cq_get_wc(cq, 16, wc, &got);
      if (ret == RPMA_E_NO_COMPLETION) {
        if (Clock::now() > deadline) {
          ADD_FAILURE() << "only " << polled << " of " << kTotalWrites << " completions arrived";
          return;
        }
        std::this_thread::yield();
        continue;
      }
      if (ret != 0) {
        ADD_FAILURE() << "rpma_cq_get_wc: " << rpma_err_2str(ret);
        return;
      }
      for (int i = 0; i < got; ++i) {
        if (wc[i].status == IBV_WC_SUCCESS && wc[i].opcode == IBV_WC_RDMA_WRITE) {
          successes.fetch_add(1);
        } else {
          ADD_FAILURE() << "wr_id " << wc[i].wr_id << ": status " << wc[i].status << " opcode "
                        << wc[i].opcode;
        }
        if (wc[i].wr_id >= 1 && wc[i].wr_id <= kTotalWrites) seen[wc[i].wr_id].fetch_add(1);
      }
      polled += got;
    }
  });

  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      const auto deadline = Clock::now() + std::chrono::milliseconds(3 * kSafetyTimeoutMs);
      for (size_t chunk = 0; chunk < kChunksPerWriter; ++chunk) {
        const size_t offset = w * kSlice + chunk * kChunk;
        const uintptr_t wr_id = w * kChunksPerWriter + chunk + 1;
        for (;;) {
          int ret = rpma_write(pair.client, remote, offset, source.mr, offset, kChunk,
                               RPMA_F_COMPLETION_ALWAYS, Ctx(wr_id));
          if (ret == 0) break;
          if (ret != RPMA_E_PROVIDER || Clock::now() > deadline || stop.load()) {
            ADD_FAILURE() << "writer " << w << " chunk " << chunk << ": " << rpma_err_2str(ret);
            stop.store(true);
            return;
          }
          retries.fetch_add(1);  // the send queue is full: the poller frees slots
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto& writer : writers) writer.join();
  poller.join();

  EXPECT_EQ(kTotalWrites, successes.load());
  for (size_t wr_id = 1; wr_id <= kTotalWrites; ++wr_id)
    EXPECT_EQ(1, seen[wr_id].load()) << "wr_id " << wr_id;
  size_t wrong = 0;
  for (size_t i = 0; i < target.bytes.size(); ++i)
    if (target.bytes[i] != source.bytes[i]) ++wrong;
  EXPECT_EQ(0u, wrong) << "bytes differ in the remote region";
  ibv_wc extra;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq, 1, &extra, nullptr));
  RecordProperty("retries_on_full_send_queue", static_cast<int>(retries.load()));

  if (!HasFailure()) {
    ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&pair.client, &pair.server));
  }
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
  EXPECT_EQ(0, rpma_mr_dereg(&target.mr));
  EXPECT_EQ(0, rpma_mr_dereg(&source.mr));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  if (!HasFailure()) {
    ASSERT_NO_FATAL_FAILURE(pair.Teardown());
  }
}

// 256: every write fits the send queue. 16: writers must back off while the poller drains.
INSTANTIATE_TEST_SUITE_P(SendQueueSizes, ConcurrentWritersTest, ::testing::Values(256u, 16u));

// ---------------------------------------------------------------------------------------------
// Four ping-pong connections at once
// ---------------------------------------------------------------------------------------------

constexpr int kLanes = 4;
constexpr int kRoundTrips = 1000;
constexpr size_t kMaxMessage = 64;

// Byte j of round `round`'s message on `lane`, `pong` for the reply.
uint8_t MessageByte(int lane, int round, bool pong, size_t j) {
  return static_cast<uint8_t>(lane * 61 + round * 7 + j * 13 + (pong ? 101 : 0));
}

size_t MessageLength(int round) { return 1 + static_cast<size_t>(round) % kMaxMessage; }

bool BytesMatch(const Buffer& buffer, int lane, int round, bool pong) {
  for (size_t j = 0; j < MessageLength(round); ++j)
    if (buffer.bytes[j] != MessageByte(lane, round, pong, j)) return false;
  return true;
}

// One connection: the client sends pings, the server answers each with a pong.
struct Lane {
  ConnectedPair pair;
  Buffer ping_out;  // client
  Buffer pong_in;   // client
  Buffer ping_in;   // server
  Buffer pong_out;  // server
  rpma_cq* client_cq = nullptr;
  rpma_cq* client_rcq = nullptr;
  rpma_cq* server_cq = nullptr;
  rpma_cq* server_rcq = nullptr;
};

void ClientLoop(Lane* lane, int index) {
  for (int round = 0; round < kRoundTrips; ++round) {
    const size_t len = MessageLength(round);
    if (rpma_recv(lane->pair.client, lane->pong_in.mr, 0, kMaxMessage, Ctx(round)) != 0) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": rpma_recv";
      return;
    }
    for (size_t j = 0; j < len; ++j) lane->ping_out.bytes[j] = MessageByte(index, round, false, j);
    if (rpma_send(lane->pair.client, lane->ping_out.mr, 0, len, RPMA_F_COMPLETION_ALWAYS,
                  Ctx(round)) != 0) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": rpma_send";
      return;
    }
    uint32_t byte_len = 0;
    if (!CheckCompletion(lane->client_cq, round, IBV_WC_SEND, nullptr) ||
        !CheckCompletion(lane->client_rcq, round, IBV_WC_RECV, &byte_len)) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": client completions";
      return;
    }
    if (byte_len != len || !BytesMatch(lane->pong_in, index, round, true)) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": wrong pong (" << byte_len
                    << " bytes)";
      return;
    }
  }
}

void ServerLoop(Lane* lane, int index) {
  for (int round = 0; round < kRoundTrips; ++round) {
    const size_t len = MessageLength(round);
    uint32_t byte_len = 0;
    if (!CheckCompletion(lane->server_rcq, round, IBV_WC_RECV, &byte_len)) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": server receive";
      return;
    }
    if (byte_len != len || !BytesMatch(lane->ping_in, index, round, false)) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": wrong ping (" << byte_len
                    << " bytes)";
      return;
    }
    if (round + 1 < kRoundTrips &&
        rpma_recv(lane->pair.server, lane->ping_in.mr, 0, kMaxMessage, Ctx(round + 1)) != 0) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": rpma_recv";
      return;
    }
    for (size_t j = 0; j < len; ++j) lane->pong_out.bytes[j] = MessageByte(index, round, true, j);
    if (rpma_send(lane->pair.server, lane->pong_out.mr, 0, len, RPMA_F_COMPLETION_ALWAYS,
                  Ctx(round)) != 0 ||
        !CheckCompletion(lane->server_cq, round, IBV_WC_SEND, nullptr)) {
      ADD_FAILURE() << "lane " << index << " round " << round << ": server send";
      return;
    }
  }
}

TEST(PingPongStressTest, FourConnectionsThousandRoundTripsEach) {
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_rcq_size(cfg, 8));
  PairOptions options;
  options.client_cfg = cfg;
  options.server_cfg = cfg;
  std::vector<std::unique_ptr<Lane>> lanes;
  for (int i = 0; i < kLanes; ++i) {
    lanes.push_back(std::make_unique<Lane>());
    Lane& lane = *lanes.back();
    ASSERT_NO_FATAL_FAILURE(lane.pair.Connect(options));
    rpma_peer* peer = lane.pair.peer;
    ASSERT_NO_FATAL_FAILURE(Register(peer, &lane.ping_out, kMaxMessage, RPMA_MR_USAGE_SEND));
    ASSERT_NO_FATAL_FAILURE(Register(peer, &lane.pong_in, kMaxMessage, RPMA_MR_USAGE_RECV));
    ASSERT_NO_FATAL_FAILURE(Register(peer, &lane.ping_in, kMaxMessage, RPMA_MR_USAGE_RECV));
    ASSERT_NO_FATAL_FAILURE(Register(peer, &lane.pong_out, kMaxMessage, RPMA_MR_USAGE_SEND));
    ASSERT_EQ(0, rpma_conn_get_cq(lane.pair.client, &lane.client_cq));
    ASSERT_EQ(0, rpma_conn_get_rcq(lane.pair.client, &lane.client_rcq));
    ASSERT_EQ(0, rpma_conn_get_cq(lane.pair.server, &lane.server_cq));
    ASSERT_EQ(0, rpma_conn_get_rcq(lane.pair.server, &lane.server_rcq));
    ASSERT_NE(nullptr, lane.client_rcq);
    ASSERT_NE(nullptr, lane.server_rcq);
    ASSERT_EQ(0, rpma_recv(lane.pair.server, lane.ping_in.mr, 0, kMaxMessage, Ctx(0)));
  }

  std::vector<std::thread> threads;
  for (int i = 0; i < kLanes; ++i) {
    threads.emplace_back(ServerLoop, lanes[i].get(), i);
    threads.emplace_back(ClientLoop, lanes[i].get(), i);
  }
  for (auto& thread : threads) thread.join();

  for (auto& lane : lanes) {
    ibv_wc wc;
    for (rpma_cq* cq : {lane->client_cq, lane->client_rcq, lane->server_cq, lane->server_rcq})
      EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq, 1, &wc, nullptr));
  }
  const bool ok = !::testing::Test::HasFailure();
  for (auto& lane : lanes) {
    if (ok) {
      ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&lane->pair.client, &lane->pair.server));
    }
    for (Buffer* buffer : {&lane->ping_out, &lane->pong_in, &lane->ping_in, &lane->pong_out})
      EXPECT_EQ(0, rpma_mr_dereg(&buffer->mr));
    if (ok) {
      ASSERT_NO_FATAL_FAILURE(lane->pair.Teardown());
    }
  }
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

// ---------------------------------------------------------------------------------------------
// One SRQ fed by four sending threads
// ---------------------------------------------------------------------------------------------

constexpr int kSrqSenders = 4;
constexpr int kSrqMessages = 500;
constexpr size_t kSrqSlots = 16;
constexpr size_t kSrqSlotSize = 64;

size_t SrqMessageLength(int seq) { return 8 + static_cast<size_t>(seq) % 48; }

uint8_t SrqMessageByte(int sender, int seq, size_t j) {
  return static_cast<uint8_t>(sender * 67 + seq * 5 + j * 29);
}

// Four clients send concurrently to four server connections that share one SRQ with few
// buffers; the receiver reposts each buffer after checking it. Every message arrives once,
// in order per connection, identified by wc.qp_num, with its bytes.
TEST(SrqStressTest, FourSendersShareOneSrq) {
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  rpma_srq_cfg* srq_cfg = nullptr;
  ASSERT_EQ(0, rpma_srq_cfg_new(&srq_cfg));
  ASSERT_EQ(0, rpma_srq_cfg_set_rq_size(srq_cfg, kSrqSlots));
  ASSERT_EQ(0, rpma_srq_cfg_set_rcq_size(srq_cfg, 64));
  rpma_srq* srq = nullptr;
  ASSERT_EQ(0, rpma_srq_new(pair.peer, srq_cfg, &srq));
  ASSERT_EQ(0, rpma_srq_cfg_delete(&srq_cfg));
  rpma_conn_cfg* server_cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&server_cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_srq(server_cfg, srq));
  PairOptions options;
  options.server_cfg = server_cfg;
  rpma_conn* clients[kSrqSenders] = {};
  rpma_conn* servers[kSrqSenders] = {};
  uint32_t qp_nums[kSrqSenders] = {};
  for (int i = 0; i < kSrqSenders; ++i) {
    ASSERT_NO_FATAL_FAILURE(
        ConnectOnce(pair.peer, pair.ep, pair.port, options, &clients[i], &servers[i]));
    ASSERT_EQ(0, rpma_conn_get_qp_num(servers[i], &qp_nums[i]));
  }
  Buffer slots;
  ASSERT_NO_FATAL_FAILURE(
      Register(pair.peer, &slots, kSrqSlots * kSrqSlotSize, RPMA_MR_USAGE_RECV));
  Buffer sources[kSrqSenders];
  for (auto& source : sources)
    ASSERT_NO_FATAL_FAILURE(Register(pair.peer, &source, kSrqSlotSize, RPMA_MR_USAGE_SEND));
  for (size_t slot = 0; slot < kSrqSlots; ++slot)
    ASSERT_EQ(0, rpma_srq_recv(srq, slots.mr, slot * kSrqSlotSize, kSrqSlotSize, Ctx(slot)));
  rpma_cq* rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq, &rcq));
  ASSERT_NE(nullptr, rcq);

  std::atomic<bool> stop{false};
  std::vector<std::thread> senders;
  for (int i = 0; i < kSrqSenders; ++i) {
    senders.emplace_back([&, i] {
      rpma_cq* cq = nullptr;
      if (rpma_conn_get_cq(clients[i], &cq) != 0) {
        ADD_FAILURE() << "rpma_conn_get_cq";
        return;
      }
      for (int seq = 0; seq < kSrqMessages && !stop.load(); ++seq) {
        const size_t len = SrqMessageLength(seq);
        for (size_t j = 0; j < len; ++j) sources[i].bytes[j] = SrqMessageByte(i, seq, j);
        if (rpma_send(clients[i], sources[i].mr, 0, len, RPMA_F_COMPLETION_ALWAYS, Ctx(seq)) != 0 ||
            !CheckCompletion(cq, seq, IBV_WC_SEND, nullptr)) {
          ADD_FAILURE() << "sender " << i << " message " << seq;
          stop.store(true);
          return;
        }
      }
    });
  }

  int next_seq[kSrqSenders] = {};
  int received = 0;
  while (received < kSrqSenders * kSrqMessages && !stop.load()) {
    ibv_wc wc;
    memset(&wc, 0, sizeof(wc));
    if (!PollInThread(rcq, &wc)) break;
    ASSERT_EQ(IBV_WC_SUCCESS, wc.status) << "message " << received;
    ASSERT_EQ(IBV_WC_RECV, wc.opcode);
    ASSERT_LT(wc.wr_id, kSrqSlots);
    int sender = -1;
    for (int i = 0; i < kSrqSenders; ++i)
      if (qp_nums[i] == wc.qp_num) sender = i;
    ASSERT_NE(-1, sender) << "unknown qp_num " << wc.qp_num;
    const int seq = next_seq[sender]++;
    ASSERT_EQ(SrqMessageLength(seq), wc.byte_len) << "sender " << sender << " message " << seq;
    const uint8_t* bytes = &slots.bytes[wc.wr_id * kSrqSlotSize];
    for (size_t j = 0; j < wc.byte_len; ++j)
      ASSERT_EQ(SrqMessageByte(sender, seq, j), bytes[j])
          << "sender " << sender << " message " << seq << " byte " << j;
    ASSERT_EQ(0,
              rpma_srq_recv(srq, slots.mr, wc.wr_id * kSrqSlotSize, kSrqSlotSize, Ctx(wc.wr_id)));
    ++received;
  }
  stop.store(true);
  for (auto& sender : senders) sender.join();
  for (int i = 0; i < kSrqSenders; ++i) EXPECT_EQ(kSrqMessages, next_seq[i]) << "sender " << i;
  ibv_wc extra;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(rcq, 1, &extra, nullptr));

  const bool ok = !::testing::Test::HasFailure();
  for (int i = 0; i < kSrqSenders; ++i) {
    if (ok) {
      ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&clients[i], &servers[i]));
    } else {
      (void)rpma_conn_delete(&clients[i]);
      (void)rpma_conn_delete(&servers[i]);
    }
  }
  EXPECT_EQ(0, rpma_mr_dereg(&slots.mr));
  for (auto& source : sources) EXPECT_EQ(0, rpma_mr_dereg(&source.mr));
  EXPECT_EQ(0, rpma_srq_delete(&srq));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&server_cfg));
  if (ok) {
    ASSERT_NO_FATAL_FAILURE(pair.Teardown());
  }
}

}  // namespace
