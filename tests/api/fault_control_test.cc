// fault_control_test.cc -- the fault seed and librpma's fault points from code
// (rpma_sim_fault_seed / _set_seed / _point_set / _point_passed): every error code, the seed
// that decides a rule's choices, and the Nth point failing as RPMA_FAULT_INJECTION=N has it.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "tests/common/test_support.h"

namespace {

class FaultControlTest : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(0, rpma_sim_fault_point_set(0));
    EXPECT_EQ(0, rpma_sim_fault_clear());
  }
};

int64_t Passed() {
  int64_t passed = -1;
  EXPECT_EQ(0, rpma_sim_fault_point_passed(&passed));
  return passed;
}

TEST_F(FaultControlTest, NullPointersAndNegativePointsAreInvalid) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_seed(nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_point_passed(nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_point_set(-1));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_fault_point_set(INT64_MIN));
}

TEST_F(FaultControlTest, SetSeedIsWhatSeedReturns) {
  uint64_t before = 0;
  ASSERT_EQ(0, rpma_sim_fault_seed(&before));
  for (uint64_t seed : {uint64_t{0}, uint64_t{42}, ~uint64_t{0}, before}) {
    ASSERT_EQ(0, rpma_sim_fault_set_seed(seed));
    uint64_t got = seed + 1;
    ASSERT_EQ(0, rpma_sim_fault_seed(&got));
    EXPECT_EQ(seed, got);
  }
}

// Which of 64 calls a p=0.5 rule fails, under the seed in force.
std::vector<bool> Choices();

// Which of 64 calls a p=0.5 rule fails, under a seed.
std::vector<bool> ChoicesUnder(uint64_t seed) {
  EXPECT_EQ(0, rpma_sim_fault_set_seed(seed));
  return Choices();
}

std::vector<bool> Choices() {
  EXPECT_EQ(0, rpma_sim_fault_add("call:fn=rpma_conn_cfg_new,err=RPMA_E_NOMEM,p=0.5"));
  std::vector<bool> failed;
  for (int i = 0; i < 64; ++i) {
    rpma_conn_cfg* cfg = nullptr;
    int ret = rpma_conn_cfg_new(&cfg);
    failed.push_back(ret == RPMA_E_NOMEM);
    if (ret == 0) {
      EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
    }
  }
  EXPECT_EQ(0, rpma_sim_fault_clear());
  return failed;
}

TEST_F(FaultControlTest, TheSeedDecidesEveryChoice) {
  std::vector<bool> first = ChoicesUnder(7);
  EXPECT_EQ(first, ChoicesUnder(7));
  EXPECT_NE(first, ChoicesUnder(8));  // 2^-64 to be equal by chance
}

// rpma_sim_fault_set_seed(3): the seed is replaced "for the choices made afterwards", and
// rules added afterwards choose as in a process started with RPMA_SIM_SEED=seed
// (docs/fault-injection.md). Clearing leftover rules after setting the seed changes nothing.
TEST_F(FaultControlTest, AClearAfterTheSeedDoesNotChangeItsChoices) {
  std::vector<bool> fresh = ChoicesUnder(7);
  ASSERT_EQ(0, rpma_sim_fault_set_seed(7));
  ASSERT_EQ(0, rpma_sim_fault_clear());
  EXPECT_EQ(fresh, Choices());
}

// A choice depends on the seed, the rule, the connection and the ordinal (docs/
// fault-injection.md, "Replaying a run"), so the same rules put in force again under the same
// seed -- a second ScopedFaults, whose failures say "RPMA_SIM_SEED=S replays the fault
// choices" -- choose as they did the first time, as a process running that scope alone does.
TEST_F(FaultControlTest, TheSameRulesInForceAgainChooseTheSame) {
  std::vector<bool> first = ChoicesUnder(7);  // ends with rpma_sim_fault_clear()
  EXPECT_EQ(first, Choices());
}

// A fork() child's simulator goes on with its parent's seed (docs/fault-injection.md), drawn
// or set: the seed the parent printed replays the child's choices too, as RPMA_SIM_SEED
// set to it would. The child's choices are those the same rules make under that seed.
TEST_F(FaultControlTest, AForkChildDrawsFromItsParentsSeed) {
  uint64_t drawn = 0;
  ASSERT_EQ(0, rpma_sim_fault_seed(&drawn));
  for (uint64_t seed : {drawn, uint64_t{0x5eed}}) {
    ASSERT_EQ(0, rpma_sim_fault_set_seed(seed));
    const std::vector<bool> parents = ChoicesUnder(seed);
    ASSERT_EQ(0, rpma_sim_fault_set_seed(seed));
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      uint64_t childs = seed + 1;
      if (rpma_sim_fault_seed(&childs) != 0 || childs != seed) _exit(10);
      _exit(Choices() == parents ? 0 : 11);
    }
    int status = 0;
    ASSERT_EQ(child, waitpid(child, &status, 0));
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(0, WEXITSTATUS(status)) << "seed " << seed;
  }
}

TEST_F(FaultControlTest, TheNthPointFailsAndTheCountStartsAgainAtEverySet) {
  // rpma_conn_cfg_new passes one point (librpma's), at its start.
  ASSERT_EQ(0, rpma_sim_fault_point_set(2));
  EXPECT_EQ(0, Passed());
  rpma_conn_cfg* cfgs[3] = {};
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfgs[0]));
  EXPECT_EQ(RPMA_E_NOMEM, rpma_conn_cfg_new(&cfgs[1]));
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfgs[2]));  // later points pass without failing
  EXPECT_EQ(3, Passed());
  ASSERT_EQ(0, rpma_sim_fault_point_set(1));
  EXPECT_EQ(0, Passed());
  rpma_conn_cfg* again = nullptr;
  EXPECT_EQ(RPMA_E_NOMEM, rpma_conn_cfg_new(&again));
  EXPECT_EQ(1, Passed());
  ASSERT_EQ(0, rpma_sim_fault_point_set(0));  // off: nothing counts or fails
  EXPECT_EQ(0, rpma_conn_cfg_new(&again));
  EXPECT_EQ(0, Passed());
  for (rpma_conn_cfg*& cfg : cfgs) EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&again));
}

// The points `call` passes (none fires).
int64_t PointsOf(const std::function<void()>& call) {
  EXPECT_EQ(0, rpma_sim_fault_point_set(INT64_MAX));
  call();
  return Passed();
}

// librpma deletes its address info (a point, rpma_info_delete) on every way out of a call
// that made one: a lookup or a listen that fails passes as many points as one that works.
TEST_F(FaultControlTest, AFailedLookupOrListenStillDeletesItsInfo) {
  ibv_context* ctx = nullptr;
  const int64_t found = PointsOf([&] {
    EXPECT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  });
  const int64_t not_found = PointsOf([&] {
    // TEST-NET-1 (RFC 5737): no interface of this host has it.
    EXPECT_EQ(RPMA_E_PROVIDER,
              rpma_utils_get_ibv_context("192.0.2.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  });
  EXPECT_EQ(found, not_found);

  ASSERT_EQ(0, rpma_sim_fault_point_set(0));
  rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  ASSERT_EQ(0, rpma_peer_new(ctx, &peer));
  rpma_ep* ep = nullptr;
  const int64_t listening =
      PointsOf([&] { EXPECT_EQ(0, rpma_ep_listen(peer, kLoopback, "0", &ep)); });
  rpma_ep* second = nullptr;
  const int64_t refused = PointsOf(
      [&] { EXPECT_EQ(RPMA_E_PROVIDER, rpma_ep_listen(peer, "192.0.2.1", "0", &second)); });
  EXPECT_EQ(listening, refused);
  ASSERT_EQ(0, rpma_sim_fault_point_set(0));
  EXPECT_EQ(0, rpma_ep_shutdown(&ep));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

}  // namespace
