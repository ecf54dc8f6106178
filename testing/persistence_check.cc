// persistence_check.cc -- a power failure of a node from a test, and the comparison of what
// survived in its memory with what the test expected.
#include <stdio.h>

#include <sstream>

#include "rpma_sim/testing.h"

namespace rpma_sim {
namespace testing {
namespace {

constexpr size_t kOffsetsShown = 8;

std::string Hex(uint8_t byte) {
  char text[8];
  snprintf(text, sizeof(text), "0x%02x", byte);
  return text;
}

}  // namespace

::testing::AssertionResult BytesEqual(const char* actual_expr, const char* expected_expr,
                                      const char* n_expr, const void* actual, const void* expected,
                                      size_t n) {
  const uint8_t* got = static_cast<const uint8_t*>(actual);
  const uint8_t* want = static_cast<const uint8_t*>(expected);
  size_t differing = 0;
  std::ostringstream offsets;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] == want[i]) continue;
    if (differing < kOffsetsShown)
      offsets << "\n  offset " << i << ": " << Hex(got[i]) << ", expected " << Hex(want[i]);
    ++differing;
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  if (differing > kOffsetsShown) offsets << "\n  ...";
  return ::testing::AssertionFailure()
         << actual_expr << " and " << expected_expr << " differ in " << differing << " of "
         << n_expr << " = " << n << " bytes; the first:" << offsets.str();
}

void PowerFail(rpma_peer* peer, rpma_sim_loss mode) {
  uint64_t seed = 0;
  ASSERT_EQ(0, rpma_sim_fault_seed(&seed));
  ASSERT_EQ(0, rpma_sim_power_failure(peer, mode))
      << "rpma_sim_power_failure (was the peer armed? PairOptions::arm_power_failure); "
      << "RPMA_SIM_SEED=" << seed << " replays the torn modes' choices";
}

}  // namespace testing
}  // namespace rpma_sim
