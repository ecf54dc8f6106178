// fault_environment_test.cc -- fault rules from the environment: RPMA_SIM_FAULTS that cannot
// be understood makes every rpma_peer_new fail (RPMA_E_INVAL), and RPMA_SIM_SEED replays a
// run: the same seed gives the same faults, another seed others. The replay test runs this
// binary again as child processes (FAULT_PATTERN_CHILD=1), each with its own environment.
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

// Runs this binary's PrintPattern with `seed`; returns its pattern ("" if none).
std::string PatternWithSeed(const char* seed) {
  // The child must not write this test's result files (Bazel's XML, premature-exit mark).
  std::string command = std::string("env -u XML_OUTPUT_FILE -u TEST_PREMATURE_EXIT_FILE ") +
                        "-u GTEST_OUTPUT FAULT_PATTERN_CHILD=1 RPMA_SIM_SEED=" + seed +
                        " RPMA_SIM_FAULTS='delay:op=write,us=1,p=0.5'"
                        " /proc/" +
                        std::to_string(getpid()) +
                        "/exe --gtest_filter=FaultEnvironmentTest.PrintPattern 2>/dev/null";
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) return "";
  char line[256];
  std::string pattern;
  while (fgets(line, sizeof(line), child) != nullptr) {
    std::string text = line;
    if (text.rfind("PATTERN ", 0) == 0) pattern = text.substr(8, 32);
  }
  pclose(child);
  return pattern;
}

TEST(FaultEnvironmentTest, TheSeedReplaysTheFaults) {
  if (getenv("FAULT_PATTERN_CHILD") != nullptr || getenv("FAULT_ENV_EXPECT") != nullptr)
    GTEST_SKIP() << "the parent run only";
  std::string first = PatternWithSeed("7");
  std::string again = PatternWithSeed("7");
  std::string other = PatternWithSeed("8");
  ASSERT_EQ(32u, first.size()) << "the child printed no pattern";
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);  // equal with probability 2^-32
  EXPECT_NE(std::string::npos, first.find('1'));
  EXPECT_NE(std::string::npos, first.find('0'));
}

}  // namespace
