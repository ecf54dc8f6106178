// Tests the default log thresholds (THRESHOLD = WARNING, AUX = DISABLED) in a binary that changes
// nothing first.
#include <librpma.h>

#include <gtest/gtest.h>

namespace {

TEST(LogDefaults, ThresholdIsWarning) {
  rpma_log_level level = RPMA_LOG_LEVEL_DEBUG;
  EXPECT_EQ(0, rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level));
  EXPECT_EQ(RPMA_LOG_LEVEL_WARNING, level);
}

TEST(LogDefaults, AuxIsDisabled) {
  rpma_log_level level = RPMA_LOG_LEVEL_DEBUG;
  EXPECT_EQ(0, rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &level));
  EXPECT_EQ(RPMA_LOG_DISABLED, level);
}

// Creating a peer (which initializes the library's state) does not change the defaults.
TEST(LogDefaults, UnchangedAfterPeerNew) {
  struct ibv_context* ctx = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  struct rpma_peer* peer = nullptr;
  ASSERT_EQ(0, rpma_peer_new(ctx, &peer));
  rpma_log_level level = RPMA_LOG_LEVEL_DEBUG;
  EXPECT_EQ(0, rpma_log_get_threshold(RPMA_LOG_THRESHOLD, &level));
  EXPECT_EQ(RPMA_LOG_LEVEL_WARNING, level);
  EXPECT_EQ(0, rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, &level));
  EXPECT_EQ(RPMA_LOG_DISABLED, level);
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

}  // namespace
