// crash_states_test.cc -- rpma_sim_crash_*: recording a node's crash points, and the crash
// states and lint of the journal. Every error code; what loss mode all and the torn modes
// leave at each point; the device models (eADR, a flush of the queue pair's scope, DRAM)
// change the states as they change durability; states with equal images are skipped; a
// state's rule (and seed) leaves, in an ordinary run, exactly the state's image. Like every
// API test, it runs in process and again over tcp and over shm.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kSize = 256;
constexpr int kTargetUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
                             RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

// A state as a test looks at it: its rule and the target region's image.
struct Seen {
  uint64_t point;
  rpma_sim_loss loss;
  std::string event, reverted, rule;
  uint64_t seed;
  std::vector<uint8_t> image;
};

struct Collected {
  const void* target;
  std::vector<Seen> states;
};

int Collect(const rpma_sim_crash_state* state, void* arg) {
  Collected& collected = *static_cast<Collected*>(arg);
  Seen seen{state->point, state->loss, state->event, state->reverted, state->rule, state->seed, {}};
  for (size_t i = 0; i < state->regions; ++i)
    if (state->region[i].address == reinterpret_cast<uint64_t>(collected.target))
      seen.image.assign(state->region[i].image, state->region[i].image + state->region[i].length);
  collected.states.push_back(std::move(seen));
  return 0;
}

void KeepLine(const char* line, void* arg) {
  static_cast<std::vector<std::string>*>(arg)->push_back(line);
}

std::vector<uint8_t> Image(std::initializer_list<std::pair<size_t, uint8_t>> lines) {
  std::vector<uint8_t> image(kSize, 0);
  for (const auto& line : lines) memset(image.data() + line.first, line.second, 64);
  return image;
}

class CrashStatesTest : public PairFixture {
 protected:
  void SetUp() override {
    const char* dir = getenv("TEST_TMPDIR");
    journal_ = std::string(dir != nullptr ? dir : "/tmp") + "/journal." + std::to_string(getpid()) +
               "." + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  void TearDown() override {
    rpma_sim_set_device_cap(RPMA_SIM_CAP_PERSISTENT_MEMORY, true);  // whatever a test left
    unlink(journal_.c_str());
    PairFixture::TearDown();
    free(target_);
  }

  // Connects and registers the target (page-aligned, as persistent memory is: its words and
  // lines fall alike in every run) and a source.
  void Prepare() {
    ASSERT_NO_FATAL_FAILURE(ConnectPair());
    if (target_ == nullptr)
      ASSERT_EQ(0, posix_memalign(reinterpret_cast<void**>(&target_), 4096, kSize));
    memset(target_, 0, kSize);
    ASSERT_NO_FATAL_FAILURE(regs_.Register(pair_.peer, target_, kSize, kTargetUsage, &target_mr_));
    source_ = Register(kSize, RPMA_MR_USAGE_WRITE_SRC, 0);
    ASSERT_NE(nullptr, source_->mr);
    ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(target_mr_, &remote_));
    // The server's writes go straight to persistent memory: a persistent flush is allowed.
    rpma_peer_cfg* pcfg = nullptr;
    ASSERT_EQ(0, rpma_peer_cfg_new(&pcfg));
    ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
    ASSERT_EQ(0, rpma_conn_apply_remote_peer_cfg(pair_.client, pcfg));
    ASSERT_EQ(0, rpma_peer_cfg_delete(&pcfg));
  }

  // Prepare, and the node starts recording.
  void Start() {
    ASSERT_NO_FATAL_FAILURE(Prepare());
    ASSERT_EQ(0, rpma_sim_crash_record(pair_.peer));
  }

  std::vector<uint8_t> Target() const { return std::vector<uint8_t>(target_, target_ + kSize); }

  // A second run in the same process: the first's pair ends, a new one (a new node).
  void Again() {
    regs_.Release();
    ASSERT_NO_FATAL_FAILURE(pair_.Teardown());
    ASSERT_NO_FATAL_FAILURE(Prepare());
  }

  void Write(size_t offset, size_t length, uint8_t byte) {
    memset(source_->bytes.data() + offset, byte, length);
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, offset, source_->mr, offset, length,
                            RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  }

  void Flush(size_t offset, size_t length, rpma_flush_type type) {
    ASSERT_EQ(0, rpma_flush(pair_.client, remote_, offset, length, type, RPMA_F_COMPLETION_ALWAYS,
                            Ctx(2)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_RDMA_READ));
  }

  // Stops recording and explores the journal with `options` (NULL: loss mode all).
  void Explore(const rpma_sim_crash_options* options, rpma_sim_crash_summary* summary) {
    ASSERT_EQ(0, rpma_sim_crash_record_stop(pair_.peer, journal_.c_str()));
    collected_.target = target_;
    ASSERT_EQ(0, rpma_sim_crash_explore(journal_.c_str(), options, Collect, &collected_, summary));
  }

  const Seen& Last() { return collected_.states.back(); }

  // The first state before `point` where one word alone survived (loss=words, no seed).
  const Seen* WordAloneAt(uint64_t point) const {
    for (const Seen& state : collected_.states)
      if (state.point == point && state.loss == RPMA_SIM_LOSS_WORDS && state.seed == 0)
        return &state;
    return nullptr;
  }

  // After a power failure: both connections lost, and deleted.
  void Lost() {
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.client, RPMA_CONN_LOST));
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(pair_.server, RPMA_CONN_LOST));
    EXPECT_EQ(0, rpma_conn_delete(&pair_.client));
    EXPECT_EQ(0, rpma_conn_delete(&pair_.server));
  }

  std::string journal_;
  uint8_t* target_ = nullptr;
  rpma_mr_local* target_mr_ = nullptr;  // the target's registration
  Buffer* source_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  Collected collected_;
};

TEST_F(CrashStatesTest, EveryErrorHasItsCode) {
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_record(nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_record_stop(nullptr, journal_.c_str()));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_record_stop(pair_.peer, nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_record_stop(pair_.peer, journal_.c_str()));  // idle
  ASSERT_EQ(0, rpma_sim_crash_record(pair_.peer));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_sim_crash_record_stop(pair_.peer, "/nonexistent/dir/journal"));
  ASSERT_EQ(0, rpma_sim_crash_record(pair_.peer));
  ASSERT_EQ(0, rpma_sim_crash_record_stop(pair_.peer, journal_.c_str()));
  Collected collected{nullptr, {}};
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_explore(nullptr, nullptr, Collect, &collected, nullptr));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_sim_crash_explore(journal_.c_str(), nullptr, nullptr, nullptr, nullptr));
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_sim_crash_explore("/nonexistent", nullptr, Collect, &collected, nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_explore("/proc/self/status", nullptr, Collect, &collected,
                                                 nullptr));  // not a journal
  std::vector<std::string> lines;
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_lint(nullptr, KeepLine, &lines));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_crash_lint(journal_.c_str(), nullptr, nullptr));
  // An empty journal: one state (nothing happened), no finding.
  rpma_sim_crash_summary summary{};
  EXPECT_EQ(0, rpma_sim_crash_explore(journal_.c_str(), nullptr, Collect, &collected, &summary));
  EXPECT_EQ(0u, summary.points);
  EXPECT_EQ(1u, summary.states);
  EXPECT_EQ(0, rpma_sim_crash_lint(journal_.c_str(), KeepLine, &lines));
}

// Loss mode all: a state holds what was durable; equal images are skipped.
TEST_F(CrashStatesTest, LossAllLeavesWhatWasDurable) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));                        // point 1
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_PERSISTENT));  // point 2
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));                       // point 3
  rpma_sim_crash_summary summary{};
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, &summary));
  EXPECT_EQ(3u, summary.points);
  // Before 1 and before 2: nothing durable; before 3 and after: the flushed line alone.
  ASSERT_EQ(2u, collected_.states.size());
  EXPECT_EQ(2u, summary.duplicates);
  EXPECT_EQ(1u, collected_.states[0].point);
  EXPECT_EQ(Image({}), collected_.states[0].image);
  EXPECT_EQ(3u, collected_.states[1].point);
  EXPECT_EQ(Image({{0, 0xAA}}), collected_.states[1].image);
  EXPECT_EQ("power_failure:point=3,side=server,loss=all", collected_.states[1].rule);
  EXPECT_NE(std::string::npos, collected_.states[1].event.find("write of 64 bytes at offset 64"))
      << collected_.states[1].event;
}

// Torn by words: each word not durable survives alone, and seeded subsets.
TEST_F(CrashStatesTest, TornStatesKeepEachWordAlone) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));   // point 1, never flushed
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));  // point 2, never flushed
  rpma_sim_crash_options options{1, 0, 2, 7, 0};
  rpma_sim_crash_summary summary{};
  ASSERT_NO_FATAL_FAILURE(Explore(&options, &summary));
  int alone = 0;
  for (const Seen& state : collected_.states) {
    if (state.loss != RPMA_SIM_LOSS_WORDS || state.seed != 0) continue;
    ++alone;
    size_t kept = 0;
    for (size_t i = 0; i < kSize; ++i) kept += state.image[i] == 0xAA || state.image[i] == 0xBB;
    EXPECT_EQ(8u, kept) << state.reverted;
    if (state.point == 2)
      EXPECT_NE(std::string::npos, state.rule.find(",loss=words,keep=1:")) << state.rule;
    else
      EXPECT_EQ("", state.rule) << "after the last point: no rule";
  }
  // Before point 2: the first write's 8 words, one at a time; after the last: the second's 8
  // (each of the first's alone is an image given before: skipped).
  EXPECT_EQ(8 + 8, alone);
}

TEST_F(CrashStatesTest, OnEadrAVisibilityFlushIsDurable) {
  ScopedCap eadr(RPMA_SIM_CAP_EADR);
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_VISIBILITY));
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, nullptr));
  EXPECT_EQ(Image({{0, 0xAA}}), Last().image);
}

TEST_F(CrashStatesTest, WithoutEadrAVisibilityFlushIsNot) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_VISIBILITY));
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, nullptr));
  EXPECT_EQ(Image({}), Last().image);
}

// The queue pair's scope: a persistent flush of one range makes its earlier writes durable.
TEST_F(CrashStatesTest, AFlushOfTheQueuePairsScopeMakesEarlierWritesDurable) {
  ScopedCap scope(RPMA_SIM_CAP_FLUSH_SCOPE_QP);
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));
  ASSERT_NO_FATAL_FAILURE(Flush(64, 64, RPMA_FLUSH_TYPE_PERSISTENT));
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, nullptr));
  EXPECT_EQ(Image({{0, 0xAA}, {64, 0xBB}}), Last().image);
}

TEST_F(CrashStatesTest, ByDefaultAFlushCoversItsRangeAlone) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));
  ASSERT_NO_FATAL_FAILURE(Flush(64, 64, RPMA_FLUSH_TYPE_PERSISTENT));
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, nullptr));
  EXPECT_EQ(Image({{64, 0xBB}}), Last().image);
}

// DRAM: nothing survives, whatever was flushed, and there is no torn state.
TEST_F(CrashStatesTest, OnDramNothingSurvives) {
  ASSERT_EQ(0, rpma_sim_set_device_cap(RPMA_SIM_CAP_PERSISTENT_MEMORY, false));
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_EQ(0, rpma_sim_set_device_cap(RPMA_SIM_CAP_PERSISTENT_MEMORY, true));
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_VISIBILITY));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));
  rpma_sim_crash_options options{1, 1, 4, 1, 0};
  rpma_sim_crash_summary summary{};
  ASSERT_NO_FATAL_FAILURE(Explore(&options, &summary));
  EXPECT_EQ(3u, summary.points);
  ASSERT_EQ(1u, collected_.states.size());
  EXPECT_EQ(Image({}), collected_.states[0].image);
  EXPECT_EQ(3u, summary.duplicates);
}

TEST_F(CrashStatesTest, LintNamesWhatTheFlushesDidNotDo) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Flush(128, 64, RPMA_FLUSH_TYPE_PERSISTENT));  // point 1: nothing there
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));                          // 2
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_PERSISTENT));    // 3
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_PERSISTENT));    // 4: twice
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));                         // 5
  ASSERT_NO_FATAL_FAILURE(Flush(64, 64, RPMA_FLUSH_TYPE_VISIBILITY));   // 6: not durable
  ASSERT_EQ(0, rpma_sim_crash_record_stop(pair_.peer, journal_.c_str()));
  std::vector<std::string> lines;
  ASSERT_EQ(4, rpma_sim_crash_lint(journal_.c_str(), KeepLine, &lines));
  auto has = [&lines](const std::string& text) {
    for (const std::string& line : lines)
      if (line.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("point 1: persistent flush of 64 bytes at offset 128")) << lines[0];
  EXPECT_TRUE(has("a flush that made nothing durable"));
  EXPECT_TRUE(has("point 4: ") && has("flushed twice with no write between (point 3"));
  // A flush is named by its work request's ordinal, as a write is.
  EXPECT_TRUE(has("point 4: persistent flush of 64 bytes at offset 0 of region"));
  EXPECT_TRUE(has("by work request 4 of queue pair")) << lines[1];
  EXPECT_TRUE(has("point 6: visibility flush") && has("PERSISTENT was needed"));
  EXPECT_TRUE(has("64 bytes at offset 64 of region") && has("never made durable"));
}

// A message in a receive buffer is not data to make durable, and on DRAM nothing can be: the
// lint names neither (as the persistence report does not).
TEST_F(CrashStatesTest, LintLeavesOutMessagesAndDram) {
  ASSERT_NO_FATAL_FAILURE(Start());
  Buffer* receive = Register(64, RPMA_MR_USAGE_RECV, 0);
  Buffer* message = Source(64, 1);
  ASSERT_TRUE(receive->mr != nullptr && message->mr != nullptr);
  ASSERT_NO_FATAL_FAILURE(PostRecvAndSend(receive, 0, 64, 7, message, 0, 64, 8));
  ASSERT_NO_FATAL_FAILURE(ExpectRecvAndSend(7, IBV_WC_SUCCESS, 8, IBV_WC_SUCCESS));
  ASSERT_EQ(0, rpma_sim_crash_record_stop(pair_.peer, journal_.c_str()));
  std::vector<std::string> lines;
  EXPECT_EQ(0, rpma_sim_crash_lint(journal_.c_str(), KeepLine, &lines))
      << (lines.empty() ? "" : lines[0]);

  ASSERT_EQ(0, rpma_sim_set_device_cap(RPMA_SIM_CAP_PERSISTENT_MEMORY, false));
  ASSERT_NO_FATAL_FAILURE(Again());
  ASSERT_EQ(0, rpma_sim_set_device_cap(RPMA_SIM_CAP_PERSISTENT_MEMORY, true));
  ASSERT_EQ(0, rpma_sim_crash_record(pair_.peer));
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_VISIBILITY));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));
  ASSERT_EQ(0, rpma_sim_crash_record_stop(pair_.peer, journal_.c_str()));
  EXPECT_EQ(0, rpma_sim_crash_lint(journal_.c_str(), KeepLine, &lines))
      << (lines.empty() ? "" : lines[0]);
}

// A seeded torn state is what a power failure with that seed leaves in an ordinary run.
TEST_F(CrashStatesTest, ASeededStateIsWhatAPowerFailureWithItsSeedLeaves) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, kSize, 0xAA));
  rpma_sim_crash_options options{1, 0, 3, 11, 0};
  ASSERT_NO_FATAL_FAILURE(Explore(&options, nullptr));
  const Seen* sampled = nullptr;
  for (const Seen& state : collected_.states)
    if (state.seed == 12) sampled = &state;
  ASSERT_NE(nullptr, sampled);
  // The ordinary run: a new node, the same write, a power failure with the state's seed.
  const Seen expected = *sampled;
  ASSERT_NO_FATAL_FAILURE(Again());
  ASSERT_EQ(0, rpma_sim_power_failure_arm(pair_.peer));
  ASSERT_NO_FATAL_FAILURE(Write(0, kSize, 0xAA));
  uint64_t seed = 0;
  ASSERT_EQ(0, rpma_sim_fault_seed(&seed));
  ASSERT_EQ(0, rpma_sim_fault_set_seed(expected.seed));
  ASSERT_EQ(0, rpma_sim_power_failure(pair_.peer, RPMA_SIM_LOSS_WORDS));
  ASSERT_EQ(0, rpma_sim_fault_set_seed(seed));
  EXPECT_EQ(expected.image, Target());
  ASSERT_NO_FATAL_FAILURE(Lost());
}

// A state's rule, in an ordinary run, stops it just before the point and leaves the image.
TEST_F(CrashStatesTest, AStatesRuleLeavesItsImageInAnOrdinaryRun) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));                         // 1
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));                        // 2
  ASSERT_NO_FATAL_FAILURE(Flush(64, 64, RPMA_FLUSH_TYPE_PERSISTENT));  // 3
  ASSERT_NO_FATAL_FAILURE(Write(128, 64, 0xCC));                       // 4
  rpma_sim_crash_options options{1, 0, 0, 1, 0};
  ASSERT_NO_FATAL_FAILURE(Explore(&options, nullptr));
  // Before point 4: the 0xAA line not durable; one of its words survives alone.
  const Seen* chosen = WordAloneAt(4);
  ASSERT_NE(nullptr, chosen);
  const Seen expected = *chosen;
  ASSERT_EQ(0, rpma_sim_fault_add(expected.rule.c_str())) << expected.rule;
  ASSERT_NO_FATAL_FAILURE(Again());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));
  ASSERT_NO_FATAL_FAILURE(Flush(64, 64, RPMA_FLUSH_TYPE_PERSISTENT));
  memset(source_->bytes.data() + 128, 0xCC, 64);
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 128, source_->mr, 128, 64,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  // The power failure: the write never lands, the connection is lost.
  ASSERT_NO_FATAL_FAILURE(Lost());
  EXPECT_EQ(0, rpma_sim_fault_clear());
  EXPECT_EQ(expected.image, Target()) << expected.rule;
}

// A recording begun after a write not yet durable: a flush during it makes those bytes
// durable, and the journal names their region (before, it was unreadable: RPMA_E_INVAL).
// Bytes placed before the recording count as durable at its start.
TEST_F(CrashStatesTest, ARecordingBegunAfterAWriteNamesItsRegion) {
  ASSERT_NO_FATAL_FAILURE(Prepare());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  ASSERT_EQ(0, rpma_sim_crash_record(pair_.peer));
  // The flush is the recording's one point (the region is in no placement of it).
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_PERSISTENT));
  // (Over shm the target learns of the write, placed directly, only after the recording
  // began: it is a point of the recording there, with nothing to revert.)
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, nullptr));
  ASSERT_FALSE(collected_.states.empty());
  for (const Seen& state : collected_.states)
    EXPECT_EQ(Image({{0, 0xAA}}), state.image) << state.rule;
}

// A flush's length past its region (librpma's portable flush ignores it), even one whose
// end wraps around: the journal records the part in the region, and stays readable.
TEST_F(CrashStatesTest, AFlushLongerThanItsRegionIsRecordedWithinIt) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xAA));                                  // point 1
  ASSERT_NO_FATAL_FAILURE(Flush(64, SIZE_MAX - 8, RPMA_FLUSH_TYPE_PERSISTENT));  // point 2
  rpma_sim_crash_summary summary{};
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, &summary));
  EXPECT_EQ(2u, summary.points);
  ASSERT_FALSE(collected_.states.empty());
  EXPECT_EQ(Image({{64, 0xAA}}), Last().image);
  EXPECT_NE(std::string::npos, Last().event.find("after the last point"));
  EXPECT_EQ("", Last().rule) << "no point comes after the last";
}

// A persist is a crash point, and a state's rule there fires in an ordinary run: the target's
// rpma_sim_persist cuts the power instead of persisting (before, only work requests looked at
// the rules: the rule never fired and the run went on).
TEST_F(CrashStatesTest, AStatesRuleAtAPersistFiresThere) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));  // 1
  ASSERT_EQ(0, rpma_sim_persist(target_, 64));  // 2
  rpma_sim_crash_options options{1, 0, 0, 1, 0};
  ASSERT_NO_FATAL_FAILURE(Explore(&options, nullptr));
  const Seen* chosen = WordAloneAt(2);
  ASSERT_NE(nullptr, chosen);
  const Seen expected = *chosen;
  EXPECT_EQ(std::string::npos, expected.rule.find("side=")) << "no connection makes a persist";
  EXPECT_NE(std::string::npos, expected.rule.find(",at=persist")) << expected.rule;
  ASSERT_EQ(0, rpma_sim_fault_add(expected.rule.c_str())) << expected.rule;
  ASSERT_NO_FATAL_FAILURE(Again());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));
  EXPECT_EQ(0, rpma_sim_persist(target_, 64));
  EXPECT_EQ(expected.image, Target()) << expected.rule;  // one word of 0xAA, the rest reverted
  ASSERT_NO_FATAL_FAILURE(Lost());
  EXPECT_EQ(0, rpma_sim_fault_clear());
}

// A power_failure rule that names an operation (op=) or a time on its connection (at_ms=)
// selects work requests only: an rpma_sim_persist that is its point does not fire it.
TEST_F(CrashStatesTest, ARuleThatNamesAnOperationOrATimeDoesNotFireAtAPersist) {
  uint64_t before = 0;  // what earlier tests fired
  ASSERT_EQ(0, rpma_sim_fault_count(&before));
  ASSERT_EQ(0, rpma_sim_fault_add("power_failure:point=2,op=write,loss=all"));
  ASSERT_EQ(0, rpma_sim_fault_add("power_failure:point=2,at_ms=0,loss=all"));
  ASSERT_NO_FATAL_FAILURE(Prepare());            // armed by the rules
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));   // 1
  EXPECT_EQ(0, rpma_sim_persist(target_, 64));   // 2
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));  // 3: the power is still on
  uint64_t fired = 0;
  EXPECT_EQ(0, rpma_sim_fault_count(&fired));
  EXPECT_EQ(before, fired);
  EXPECT_EQ(0, rpma_sim_fault_clear());
}

// Every region over `target` in each state: (point, image) pairs.
struct OverTarget {
  const void* target;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> images;
};

int CollectOverTarget(const rpma_sim_crash_state* state, void* arg) {
  OverTarget& over = *static_cast<OverTarget*>(arg);
  for (size_t i = 0; i < state->regions; ++i)
    if (state->region[i].address == reinterpret_cast<uint64_t>(over.target))
      over.images.emplace_back(
          state->point, std::vector<uint8_t>(state->region[i].image,
                                             state->region[i].image + state->region[i].length));
  return 0;
}

// A server that registers its persistent memory again (a region per connection, say): the
// second registration's image must not hold, before point 1, a write the first one took only
// at point 1. (Each region is rebuilt alone, from its own final contents back through its own
// placements: the second's start still holds the first's write, and rpma-sim-crash lays the
// second's image over the first's in the file, so a crash before the write or before its flush
// shows it there.)
TEST_F(CrashStatesTest, AMemoryRegisteredAgainHoldsNoWriteBeforeItHappened) {
  ASSERT_NO_FATAL_FAILURE(Start());
  ASSERT_NO_FATAL_FAILURE(Write(0, 64, 0xAA));                        // point 1
  ASSERT_NO_FATAL_FAILURE(Flush(0, 64, RPMA_FLUSH_TYPE_PERSISTENT));  // point 2
  ASSERT_NO_FATAL_FAILURE(regs_.Deregister(&target_mr_));
  ASSERT_NO_FATAL_FAILURE(regs_.Register(pair_.peer, target_, kSize, kTargetUsage, &target_mr_));
  ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(target_mr_, &remote_));
  ASSERT_NO_FATAL_FAILURE(Write(64, 64, 0xBB));                        // point 3
  ASSERT_NO_FATAL_FAILURE(Flush(64, 64, RPMA_FLUSH_TYPE_PERSISTENT));  // point 4
  ASSERT_EQ(0, rpma_sim_crash_record_stop(pair_.peer, journal_.c_str()));
  OverTarget over{target_, {}};
  ASSERT_EQ(0,
            rpma_sim_crash_explore(journal_.c_str(), nullptr, CollectOverTarget, &over, nullptr));
  bool before_the_write = false;
  for (const auto& state : over.images) {
    if (state.first > 2) continue;
    before_the_write = true;
    // Before point 1 nothing was written; before point 2 the write was not durable.
    EXPECT_EQ(Image({}), state.second) << "a region over the target before point " << state.first;
  }
  EXPECT_TRUE(before_the_write);
}

// Two images that differ are two states, even when a 64-bit hash of them is equal: these two
// words have the same FNV-1a hash (so do two regions starting with them and alike after), and
// the state after the durable write (its word whole) must still be given, not skipped as a
// duplicate of the state before it.
TEST_F(CrashStatesTest, TwoImagesThatDifferAreNotSkippedAsDuplicates) {
  const uint8_t before[8] = {18, 44, 49, 138, 92, 87, 142, 89};      // 0x598e575c8a312c12
  const uint8_t written[8] = {229, 44, 185, 120, 139, 58, 145, 19};  // 0x13913a8b78b92ce5
  ASSERT_NO_FATAL_FAILURE(Prepare());
  memcpy(target_, before, 8);  // durable when the recording begins
  ASSERT_EQ(0, rpma_sim_crash_record(pair_.peer));
  memcpy(source_->bytes.data(), written, 8);
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, source_->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(1)));  // point 1
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(Flush(0, 8, RPMA_FLUSH_TYPE_PERSISTENT));  // point 2
  rpma_sim_crash_summary summary{};
  ASSERT_NO_FATAL_FAILURE(Explore(nullptr, &summary));
  // Before 1: the old word; before 2: the same (a duplicate); after the last: the new word.
  EXPECT_EQ(2u, summary.states);
  EXPECT_EQ(1u, summary.duplicates);
  std::vector<uint8_t> after(kSize, 0);
  memcpy(after.data(), written, 8);
  EXPECT_EQ(after, Last().image) << "the state after the flush was not given";
}

}  // namespace
