// crash_sweep_test.cc -- SweepCrashStates: a commit flag made durable before the record it
// commits is found (the point named, with the rule that replays it, and the replay fails the
// recovery in an ordinary run); a record torn across lines with no checksum is found only in
// the torn modes; a correct protocol has no failing state; a recovery that crashes is a
// result, not the end of the test. On inproc, shm and tcp.
#include <gtest/gtest-spi.h>
#include <rpma_sim/testing.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using rpma_sim::testing::ConnectedPair;
using rpma_sim::testing::CrashSweepOptions;
using rpma_sim::testing::CrashSweepSummary;
using rpma_sim::testing::PairTest;
using rpma_sim::testing::ScopedFaults;
using rpma_sim::testing::Side;

constexpr size_t kFlag = 0;     // a u64 commit flag, on its own line
constexpr size_t kRecord = 64;  // a 128-byte record after it
constexpr size_t kRecordSize = 128;
constexpr uint8_t kByte = 0x5A;

// The client writes [offset, offset + length) of its memory to the server's; with `flush`,
// flushes it to persistence. False (nothing asserted) if a call or completion fails: a
// workload may run into a power failure (a replay).
bool Write(Side& client, size_t offset, size_t length) {
  return rpma_write(client.conn, client.remote, offset, client.mr, offset, length,
                    RPMA_F_COMPLETION_ON_ERROR, nullptr) == 0;
}

bool Flush(Side& client, size_t offset, size_t length) {
  if (rpma_flush(client.conn, client.remote, offset, length, RPMA_FLUSH_TYPE_PERSISTENT,
                 RPMA_F_COMPLETION_ALWAYS, nullptr) != 0)
    return false;
  ibv_wc wc;
  return rpma_sim::testing::NextCompletion(client.cq, &wc) == 0 && wc.status == IBV_WC_SUCCESS;
}

// A record committed by a flag. `flag_first` is the bug: the flag durable before the record.
void Commit(ConnectedPair& pair, bool flag_first) {
  Side& client = pair.client();
  memset(client.memory + kRecord, kByte, kRecordSize);
  const uint64_t one = 1;
  memcpy(client.memory + kFlag, &one, sizeof(one));
  if (flag_first) {
    (void)(Write(client, kRecord, kRecordSize) && Write(client, kFlag, sizeof(one)) &&
           Flush(client, kFlag, sizeof(one)) && Flush(client, kRecord, kRecordSize));
  } else {
    (void)(Write(client, kRecord, kRecordSize) && Flush(client, kRecord, kRecordSize) &&
           Write(client, kFlag, sizeof(one)) && Flush(client, kFlag, sizeof(one)));
  }
}

// Recovery: a set flag promises the whole record.
bool Recovered(const uint8_t* memory) {
  uint64_t flag;
  memcpy(&flag, memory + kFlag, sizeof(flag));
  for (size_t i = 0; flag == 1 && i < kRecordSize; ++i)
    if (memory[kRecord + i] != kByte) return false;
  return true;
}

void Recover(uint8_t* memory, size_t size) {
  EXPECT_TRUE(Recovered(memory)) << "the flag is set but the record is not there";
}

CrashSweepOptions Options(bool torn) {
  CrashSweepOptions options;
  options.pair.direct_write_to_pmem = true;
  options.words = torn;
  options.lines = torn;
  options.samples = torn ? 4 : 0;
  options.print = false;
  return options;
}

// Runs a sweep, taking the failure it records instead of the test (*failure: its message).
CrashSweepSummary Sweep(const std::function<void(ConnectedPair&)>& workload,
                        const std::function<void(uint8_t*, size_t)>& recover,
                        const CrashSweepOptions& options, std::string* failure) {
  ::testing::TestPartResultArray results;
  CrashSweepSummary summary;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    summary = SweepCrashStates(workload, recover, options);
  }
  for (int i = 0; i < results.size(); ++i)
    if (results.GetTestPartResult(i).failed()) *failure += results.GetTestPartResult(i).message();
  return summary;
}

class CrashSweepTest : public PairTest {};

TEST_P(CrashSweepTest, TheFlagDurableBeforeTheRecordIsFound) {
  std::string failure;
  CrashSweepSummary summary =
      Sweep([](ConnectedPair& pair) { Commit(pair, true); }, Recover, Options(false), &failure);
  EXPECT_EQ(4u, summary.points);  // write, write, flush, flush
  ASSERT_EQ(1u, summary.failed) << failure;
  const rpma_sim::testing::CrashStateResult* failed = nullptr;
  for (const auto& row : summary.results)
    if (!row.recovered) failed = &row;
  ASSERT_NE(nullptr, failed);
  // Just before the record's flush, with the flag durable: the record is not.
  EXPECT_EQ(4u, failed->point);
  EXPECT_NE(std::string::npos, failed->event.find("persistent flush of 128 bytes at offset 64"))
      << failed->event;
  EXPECT_EQ("power_failure:point=4,side=server,loss=all", failed->rule);
  EXPECT_NE(std::string::npos, failed->failure.find("the flag is set but the record is not there"))
      << failed->failure;
  EXPECT_NE(std::string::npos, failure.find("1 of 3 crash states did not recover")) << failure;
  EXPECT_NE(std::string::npos,
            failure.find("RPMA_SIM_FAULTS='power_failure:point=4,side=server,loss=all'"))
      << failure;

  // The replay: the same workload in an ordinary run, the state's rule in force. The server
  // loses power just before the point, and recovery fails on what is left.
  ASSERT_NO_FATAL_FAILURE(Connect(Options(false).pair));
  {
    ScopedFaults rule(failed->rule);
    Commit(pair_, true);
    EXPECT_CONN_EVENT(server().conn, RPMA_CONN_LOST);
  }
  EXPECT_FALSE(Recovered(server().memory)) << "the replay did not fail the recovery";
}

TEST_P(CrashSweepTest, ACorrectProtocolHasNoFailingState) {
  std::string failure;
  CrashSweepSummary summary =
      Sweep([](ConnectedPair& pair) { Commit(pair, false); }, Recover, Options(true), &failure);
  EXPECT_EQ("", failure);
  EXPECT_EQ(0u, summary.failed);
  EXPECT_LT(3u, summary.states);  // all, and the torn ones
}

// A record whose length says it is there, torn across lines, with no checksum: every state of
// loss mode all is whole, a torn one is not.
void TornRecord(ConnectedPair& pair) {
  Side& client = pair.client();
  uint64_t length = kRecordSize - sizeof(uint64_t);
  memcpy(client.memory + kRecord, &length, sizeof(length));
  memset(client.memory + kRecord + sizeof(length), kByte, length);
  (void)(Write(client, kRecord, kRecordSize) && Flush(client, kRecord, kRecordSize));
}

void RecoverTorn(uint8_t* memory, size_t size) {
  uint64_t length;
  memcpy(&length, memory + kRecord, sizeof(length));
  if (length == 0) return;  // no record
  for (size_t i = 0; i < length; ++i)
    ASSERT_EQ(kByte, memory[kRecord + sizeof(length) + i]) << "a torn record at byte " << i;
}

TEST_P(CrashSweepTest, ATornRecordWithoutAChecksumIsFoundOnlyTorn) {
  std::string failure;
  CrashSweepSummary all = Sweep(TornRecord, RecoverTorn, Options(false), &failure);
  EXPECT_EQ(0u, all.failed) << failure;
  failure.clear();
  CrashSweepSummary torn = Sweep(TornRecord, RecoverTorn, Options(true), &failure);
  EXPECT_LT(0u, torn.failed);
  for (const auto& row : torn.results)
    if (!row.recovered) EXPECT_NE(RPMA_SIM_LOSS_ALL, row.loss) << row.reverted;
  EXPECT_NE(std::string::npos, failure.find("a torn record at byte")) << failure;
}

TEST_P(CrashSweepTest, ARecoveryThatCrashesIsAResult) {
  std::string failure;
  CrashSweepSummary summary = Sweep([](ConnectedPair& pair) { Commit(pair, false); },
                                    [](uint8_t* memory, size_t size) {
                                      uint64_t flag;
                                      memcpy(&flag, memory + kFlag, sizeof(flag));
                                      if (flag == 1) abort();  // the recovery code's own bug
                                    },
                                    Options(false), &failure);
  EXPECT_EQ(1u, summary.failed);
  EXPECT_EQ(3u, summary.states);  // the sweep went on after the crash
  EXPECT_NE(std::string::npos, failure.find("recovery crashed: Aborted")) << failure;
}

// A server region of 256 MiB (a small persistent-memory pool): a journal holds at most
// 256 MiB, the region's final contents counted at its first write, so the recording ends at
// the workload's first write and the flag-first commit is never explored. The sweep must not
// pass as if every state recovered: it records a failure (the states it found, or that the
// recording was cut short and the rest were not explored).
TEST_P(CrashSweepTest, ARecordingCutShortAtTheJournalsLimitIsNotAPass) {
  // The limit is the recorder's, whatever the transport.
  if (GetParam() != RPMA_SIM_TRANSPORT_INPROC) GTEST_SKIP() << "inproc is enough";
  CrashSweepOptions options = Options(false);
  options.pair.server_region_size = 256 << 20;
  std::string failure;
  CrashSweepSummary summary =
      Sweep([](ConnectedPair& pair) { Commit(pair, true); }, Recover, options, &failure);
  EXPECT_NE("", failure) << summary.states << " states judged, " << summary.failed << " failed, of "
                         << summary.points
                         << " points: a clean pass, though the commit was never explored";
}

// The server tells the client something: a message into the client's receive buffer is a
// crash point of the client's node.
bool Tell(ConnectedPair& pair, int i) {
  Side& client = pair.client();
  Side& server = pair.server();
  ibv_wc wc;
  return rpma_recv(client.conn, client.mr, 2048 + 64 * i, 64, nullptr) == 0 &&
         rpma_send(server.conn, server.mr, 3072, 64, RPMA_F_COMPLETION_ALWAYS, nullptr) == 0 &&
         rpma_sim::testing::NextCompletion(server.cq, &wc) == 0 && wc.status == IBV_WC_SUCCESS &&
         rpma_sim::testing::NextCompletion(client.cq, &wc) == 0 && wc.status == IBV_WC_SUCCESS;
}

// A state that fails only after the last point (here, a recovery whose own bug is to refuse a
// whole record): its replay is a power failure at the end of the run, not a rule (no point
// comes after the last to stop before).
TEST_P(CrashSweepTest, TheLastStateIsReplayedByAPowerFailureAtTheEnd) {
  std::string failure;
  CrashSweepSummary summary = Sweep(
      [](ConnectedPair& pair) {
        Side& client = pair.client();
        memset(client.memory + kRecord, kByte, kRecordSize);
        (void)(Write(client, kRecord, kRecordSize) && Flush(client, kRecord, kRecordSize));
      },
      [](uint8_t* memory, size_t size) {
        EXPECT_NE(kByte, memory[kRecord]) << "the recovery's own bug: a whole record refused";
      },
      Options(false), &failure);
  EXPECT_EQ(2u, summary.points);
  ASSERT_EQ(1u, summary.failed) << failure;
  const rpma_sim::testing::CrashStateResult* last = nullptr;
  for (const auto& row : summary.results)
    if (!row.recovered) last = &row;
  ASSERT_NE(nullptr, last);
  EXPECT_EQ("after the last point", last->event);
  EXPECT_EQ("", last->rule);
  EXPECT_NE(std::string::npos,
            failure.find("replay: rpma_sim_power_failure(server peer, RPMA_SIM_LOSS_ALL) after "
                         "the workload"))
      << failure;
  EXPECT_EQ(std::string::npos, failure.find("point=3")) << "a rule that never fires: " << failure;
}

// Server points 1-3, then the client's node reaches its points 1-4 before the server's 4th:
// a write (then a flush, 5), or the server's own persist.
void ServerAndClientPoints(ConnectedPair& pair, bool persist_fourth) {
  Side& client = pair.client();
  memset(client.memory, 0xAA, 64);
  memset(client.memory + 64, 0xBB, 64);
  memset(client.memory + 128, 0xCC, 64);
  if (!(Write(client, 0, 64) && Flush(client, 0, 64) && Write(client, 64, 64) &&  // 1-3
        Tell(pair, 0) && Tell(pair, 1) && Tell(pair, 2) && Tell(pair, 3)))
    return;
  if (persist_fourth)
    (void)rpma_sim_persist(pair.server().memory + 64, 64);  // 4
  else
    (void)(Write(client, 128, 64) && Flush(client, 128, 64));  // 4-5
}

class CrashReplayTest : public PairTest {
 protected:
  // Both nodes of a pair in one process count crash points: the state just before the
  // server's 4th, one word of 0xBB surviving alone, replayed by its rule, is the server's
  // memory, whatever the client's node reached first.
  void ExpectTheServersFourthPointReplayed(bool persist_fourth, const char* marks) {
    std::string failure;
    auto workload = [persist_fourth](ConnectedPair& pair) {
      ServerAndClientPoints(pair, persist_fourth);
    };
    CrashSweepSummary summary = Sweep(
        workload, [](uint8_t*, size_t) {}, Options(true), &failure);
    EXPECT_EQ("", failure);
    const rpma_sim::testing::CrashStateResult* chosen = nullptr;
    for (const auto& row : summary.results)
      if (row.point == 4 && row.loss == RPMA_SIM_LOSS_WORDS && chosen == nullptr) chosen = &row;
    ASSERT_NE(nullptr, chosen);
    EXPECT_NE(std::string::npos, chosen->rule.find(marks)) << chosen->rule;

    ASSERT_NO_FATAL_FAILURE(Connect(Options(true).pair));
    {
      ScopedFaults rule(chosen->rule);
      workload(pair_);
      EXPECT_CONN_EVENT(server().conn, RPMA_CONN_LOST);
    }
    const uint8_t* memory = server().memory;
    EXPECT_EQ(std::vector<uint8_t>(64, 0xAA), std::vector<uint8_t>(memory, memory + 64));
    EXPECT_EQ(8, std::count(memory + 64, memory + 128, 0xBB)) << chosen->rule;
    EXPECT_EQ(0, std::count(memory + 128, memory + 192, 0xCC)) << chosen->rule;
  }
};

// A point a connection made: the rule names the server's side.
TEST_P(CrashReplayTest, AWritesRuleFiresOnTheServersNodeNotOnItsPeers) {
  ExpectTheServersFourthPointReplayed(false, ",side=server");
}

// A persist: no side, and at=persist, so the client's 4th point does not fire it.
TEST_P(CrashReplayTest, APersistsRuleFiresOnTheServersNodeNotOnItsPeers) {
  ExpectTheServersFourthPointReplayed(true, ",at=persist");
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(CrashReplayTest);
INSTANTIATE_RPMA_SIM_TRANSPORTS(CrashSweepTest);

}  // namespace
