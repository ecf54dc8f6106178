// Tests of the configuration home (sim/fabric/config): EnvFlag parsing and the device capabilities.
#include "sim/fabric/config.h"

#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "sim/common/log.h"

namespace rpma_sim {
namespace {

int g_warnings = 0;

void CountingLogFunction(LogLevel level, const char*, int, const char*, const char*, ...) {
  if (level == LogLevel::kWarning) ++g_warnings;
}

// Each test gets its own variable name, unset before and after; log output is counted, not
// sent to syslog.
class EnvFlagTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = std::string("RPMA_SIM_CONFIG_TEST_") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    unsetenv(name_.c_str());
    g_warnings = 0;
    LogSetFunction(&CountingLogFunction);
  }
  void TearDown() override {
    unsetenv(name_.c_str());
    LogSetFunction(nullptr);
  }

  // EnvFlag of this test's variable set to `value`, with `fallback`.
  bool FlagWith(const char* value, bool fallback) {
    setenv(name_.c_str(), value, 1);
    return EnvFlagOr(name_.c_str(), fallback);
  }

  std::string name_;
};

TEST_F(EnvFlagTest, UnsetGivesTheFallback) {
  EXPECT_TRUE(EnvFlagOr(name_.c_str(), true));
  EXPECT_FALSE(EnvFlagOr(name_.c_str(), false));
  EXPECT_EQ(0, g_warnings);
}

TEST_F(EnvFlagTest, EmptyGivesTheFallback) {
  EXPECT_TRUE(FlagWith("", true));
  EXPECT_FALSE(FlagWith("", false));
}

TEST_F(EnvFlagTest, TrueWords) {
  for (const char* value : {"1", "yes", "on", "true"}) {
    EXPECT_TRUE(FlagWith(value, false)) << value;
    EXPECT_TRUE(FlagWith(value, true)) << value;
  }
  EXPECT_EQ(0, g_warnings);
}

TEST_F(EnvFlagTest, FalseWords) {
  for (const char* value : {"0", "no", "off", "false"}) {
    EXPECT_FALSE(FlagWith(value, true)) << value;
    EXPECT_FALSE(FlagWith(value, false)) << value;
  }
  EXPECT_EQ(0, g_warnings);
}

TEST_F(EnvFlagTest, WordsAreCaseInsensitive) {
  for (const char* value : {"YES", "On", "TRUE", "tRuE"})
    EXPECT_TRUE(FlagWith(value, false)) << value;
  for (const char* value : {"NO", "Off", "FALSE", "fAlSe"})
    EXPECT_FALSE(FlagWith(value, true)) << value;
}

TEST_F(EnvFlagTest, GarbageGivesTheFallbackAndAWarning) {
  for (const char* value : {"2", "maybe", "y", "n", "yes ", " on", "truefalse", "01"}) {
    EXPECT_TRUE(FlagWith(value, true)) << "'" << value << "'";
    EXPECT_FALSE(FlagWith(value, false)) << "'" << value << "'";
  }
  EXPECT_EQ(16, g_warnings);
}

TEST_F(EnvFlagTest, ReadsTheCurrentValueEachTime) {
  EXPECT_TRUE(FlagWith("on", false));
  EXPECT_FALSE(FlagWith("off", true));
  unsetenv(name_.c_str());
  EXPECT_TRUE(EnvFlagOr(name_.c_str(), true));
}

// Restores the capabilities each test found.
class DeviceCapsTest : public ::testing::Test {
 protected:
  void SetUp() override { saved_ = GetDeviceCaps(); }
  void TearDown() override { SetDeviceCaps(saved_); }
  DeviceCaps saved_;
};

TEST_F(DeviceCapsTest, SetThenGetRoundTrips) {
  DeviceCaps flipped;
  flipped.persistent_memory = !saved_.persistent_memory;
  flipped.native_flush = !saved_.native_flush;
  flipped.native_atomic_write = !saved_.native_atomic_write;
  flipped.on_demand_paging = !saved_.on_demand_paging;
  SetDeviceCaps(flipped);
  DeviceCaps got = GetDeviceCaps();
  EXPECT_EQ(flipped.persistent_memory, got.persistent_memory);
  EXPECT_EQ(flipped.native_flush, got.native_flush);
  EXPECT_EQ(flipped.native_atomic_write, got.native_atomic_write);
  EXPECT_EQ(flipped.on_demand_paging, got.on_demand_paging);
}

TEST_F(DeviceCapsTest, EachCapabilityIsIndependent) {
  DeviceCaps caps;
  caps.persistent_memory = false;
  caps.native_flush = true;
  caps.native_atomic_write = false;
  caps.on_demand_paging = true;
  SetDeviceCaps(caps);
  DeviceCaps got = GetDeviceCaps();
  EXPECT_FALSE(got.persistent_memory);
  EXPECT_TRUE(got.native_flush);
  EXPECT_FALSE(got.native_atomic_write);
  EXPECT_TRUE(got.on_demand_paging);
}

TEST_F(DeviceCapsTest, GetReturnsASnapshot) {
  DeviceCaps snapshot = GetDeviceCaps();
  DeviceCaps changed = snapshot;
  changed.native_flush = !snapshot.native_flush;
  SetDeviceCaps(changed);
  EXPECT_EQ(saved_.native_flush, snapshot.native_flush);
  EXPECT_EQ(changed.native_flush, GetDeviceCaps().native_flush);
}

TEST(DeviceCapsDefaultsTest, StructDefaultsMatchTheDocumentedOnes) {
  DeviceCaps caps;
  EXPECT_TRUE(caps.persistent_memory);
  EXPECT_FALSE(caps.native_flush);
  EXPECT_FALSE(caps.native_atomic_write);
  EXPECT_FALSE(caps.on_demand_paging);
}

}  // namespace
}  // namespace rpma_sim
