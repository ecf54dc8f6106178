// fault_environment_test.cc -- fault rules from the environment: RPMA_SIM_FAULTS that cannot
// be understood (or an @FILE that cannot be read, or an RPMA_SIM_SEED that is not a number)
// makes every rpma_peer_new fail (RPMA_E_INVAL); RPMA_SIM_SEED (decimal, or hex after 0x)
// replays a run: the same seed gives the same faults, another seed others; a clear before the
// first peer removes the environment's rules. The parent tests run this binary again as child
// processes (FAULT_*_CHILD=1), each with its own environment.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "tests/common/test_support.h"

namespace {

TEST(FaultEnvironmentTest, MalformedRulesFailEveryPeer) {
  const char* expect = getenv("FAULT_ENV_EXPECT");
  if (expect == nullptr || std::string(expect) != "malformed") GTEST_SKIP() << "not that run";
  ibv_context* context = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &context));
  rpma_peer* peer = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_new(context, &peer));
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_new(context, &peer));  // every one
  EXPECT_EQ(nullptr, peer);
}

// In a child: 32 writes, one at a time, each followed by whether a rule fired for it.
TEST(FaultEnvironmentTest, PrintPattern) {
  if (getenv("FAULT_PATTERN_CHILD") == nullptr) GTEST_SKIP() << "runs as a child only";
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  Registrations regs;
  Buffer* target = regs.NewBuffer(pair.peer, 8, RPMA_MR_USAGE_WRITE_DST, 0);
  Buffer* source = regs.NewBuffer(pair.peer, 8, RPMA_MR_USAGE_WRITE_SRC, 1);
  rpma_mr_remote* remote = regs.RemoteOf(target);
  ASSERT_NE(nullptr, remote);
  std::string pattern;
  uint64_t fired = 0, before = 0;
  for (int i = 0; i < 32; ++i) {
    ASSERT_EQ(
        0, rpma_write(pair.client, remote, 0, source->mr, 0, 8, RPMA_F_COMPLETION_ALWAYS, Ctx(i)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(MainCq(pair.client), i, IBV_WC_RDMA_WRITE));
    ASSERT_EQ(0, rpma_sim_fault_count(&fired));
    pattern += fired > before ? '1' : '0';
    before = fired;
  }
  printf("PATTERN %s\n", pattern.c_str());
  regs.Release();
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// Runs this binary's test `child_test` (a child mode: `mode`=1) with the fault variables unset
// and then `settings` (shell words, quoted) set; returns the first line of its output that
// starts with `prefix`, without its newline ("" if none). The child must not write this
// test's result files (Bazel's XML, the premature-exit mark).
std::string ChildLine(const char* mode, const char* child_test, const std::string& settings,
                      const char* prefix) {
  std::string command = std::string("env -u XML_OUTPUT_FILE -u TEST_PREMATURE_EXIT_FILE ") +
                        "-u GTEST_OUTPUT -u RPMA_SIM_FAULTS -u RPMA_SIM_SEED " + mode + "=1 " +
                        settings + " /proc/" + std::to_string(getpid()) +
                        "/exe --gtest_filter=FaultEnvironmentTest." + child_test + " 2>/dev/null";
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) return "";
  char line[256];
  std::string found;
  while (fgets(line, sizeof(line), child) != nullptr) {
    std::string text = line;
    if (found.empty() && text.rfind(prefix, 0) == 0) found = text.substr(0, text.find('\n'));
  }
  pclose(child);
  return found;
}

// PrintPattern's pattern under `seed` ("" if none).
std::string PatternWithSeed(const char* seed) {
  std::string line = ChildLine(
      "FAULT_PATTERN_CHILD", "PrintPattern",
      std::string("RPMA_SIM_SEED=") + seed + " RPMA_SIM_FAULTS='delay:op=write,us=1,p=0.5'",
      "PATTERN ");
  return line.empty() ? "" : line.substr(8, 32);
}

bool IsParentRun() {
  return getenv("FAULT_PATTERN_CHILD") == nullptr && getenv("FAULT_SEED_CHILD") == nullptr &&
         getenv("FAULT_CLEAR_CHILD") == nullptr && getenv("FAULT_ENV_EXPECT") == nullptr;
}

TEST(FaultEnvironmentTest, TheSeedReplaysTheFaults) {
  if (!IsParentRun()) GTEST_SKIP() << "the parent run only";
  std::string first = PatternWithSeed("7");
  std::string again = PatternWithSeed("7");
  std::string other = PatternWithSeed("8");
  ASSERT_EQ(32u, first.size()) << "the child printed no pattern";
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);  // equal with probability 2^-32
  EXPECT_NE(std::string::npos, first.find('1'));
  EXPECT_NE(std::string::npos, first.find('0'));
}

// In a child: the seed the process took from RPMA_SIM_SEED, and what rpma_peer_new returns.
TEST(FaultEnvironmentTest, PrintSeed) {
  if (getenv("FAULT_SEED_CHILD") == nullptr) GTEST_SKIP() << "runs as a child only";
  uint64_t seed = 0;
  ASSERT_EQ(0, rpma_sim_fault_seed(&seed));
  ibv_context* context = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &context));
  rpma_peer* peer = nullptr;
  int ret = rpma_peer_new(context, &peer);
  if (ret == 0) EXPECT_EQ(0, rpma_peer_delete(&peer));
  printf("SEED %llu PEER %d\n", static_cast<unsigned long long>(seed), ret);
}

// PrintSeed's line with the environment `settings` adds.
std::string SeedLineUnder(const std::string& settings) {
  return ChildLine("FAULT_SEED_CHILD", "PrintSeed", settings, "SEED ");
}

std::string SeedLineWith(const char* seed) {
  return SeedLineUnder(std::string("RPMA_SIM_SEED=") + seed);
}

// rpma_sim(7), rpma_sim_fault_seed(3): RPMA_SIM_SEED is "a decimal number (or, with 0x,
// hexadecimal)"; rpma-sim-run --seed takes any whole number. A leading zero is decimal.
TEST(FaultEnvironmentTest, TheSeedIsDecimal) {
  if (!IsParentRun()) GTEST_SKIP() << "the parent run only";
  EXPECT_EQ("SEED 42 PEER 0", SeedLineWith("42"));
  EXPECT_EQ("SEED 66 PEER 0", SeedLineWith("0x42"));
  EXPECT_EQ("SEED 10 PEER 0", SeedLineWith("010"));  // not octal 8
  EXPECT_EQ("SEED 9 PEER 0", SeedLineWith("09"));    // not 0
}

// A seed that is not a number is bad input, as rules that are not understood are: it must not
// silently become another seed (every rpma_peer_new fails, as under RPMA_SIM_FAULTS that
// cannot be understood).
TEST(FaultEnvironmentTest, ASeedThatIsNotANumberIsRefused) {
  if (!IsParentRun()) GTEST_SKIP() << "the parent run only";
  for (const char* bad : {"seven", "12abc", "-1", "99999999999999999999999"}) {
    std::string line = SeedLineWith(bad);
    EXPECT_NE(std::string::npos, line.find("PEER -")) << "RPMA_SIM_SEED=" << bad << ": " << line;
  }
}

// RPMA_SIM_FAULTS=@FILE that cannot be read is refused (every rpma_peer_new fails), not taken
// as no rules: a directory is not a file of rules.
TEST(FaultEnvironmentTest, RulesFromADirectoryAreRefused) {
  if (!IsParentRun()) GTEST_SKIP() << "the parent run only";
  EXPECT_NE(std::string::npos, SeedLineUnder("RPMA_SIM_FAULTS=@/nonexistent").find("PEER -"));
  std::string line = SeedLineUnder("RPMA_SIM_FAULTS=@/");
  EXPECT_NE(std::string::npos, line.find("PEER -")) << line;
}

// In a child: rpma_sim_fault_clear first, then a peer, then what rpma_conn_cfg_new returns.
TEST(FaultEnvironmentTest, PrintConfigAfterClear) {
  if (getenv("FAULT_CLEAR_CHILD") == nullptr) GTEST_SKIP() << "runs as a child only";
  ASSERT_EQ(0, rpma_sim_fault_clear());
  ibv_context* context = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &context));
  rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(context, &peer));
  rpma_conn_cfg* cfg = nullptr;
  int ret = rpma_conn_cfg_new(&cfg);
  if (ret == 0) EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
  printf("CFG %d\n", ret);
}

// rpma_sim_fault_add(3): "rpma_sim_fault_clear() removes every rule, those from
// RPMA_SIM_FAULTS included" -- also when it comes before the first rpma_peer_new.
TEST(FaultEnvironmentTest, ClearRemovesTheEnvironmentsRulesEvenBeforeTheFirstPeer) {
  if (!IsParentRun()) GTEST_SKIP() << "the parent run only";
  std::string found =
      ChildLine("FAULT_CLEAR_CHILD", "PrintConfigAfterClear",
                "RPMA_SIM_FAULTS='call:fn=rpma_conn_cfg_new,err=RPMA_E_NOMEM'", "CFG ");
  EXPECT_EQ("CFG 0", found) << "a rule of RPMA_SIM_FAULTS was in force after rpma_sim_fault_clear";
}

}  // namespace
