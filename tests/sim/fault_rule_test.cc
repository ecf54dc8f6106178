// fault_rule_test.cc -- the times a rule names (a delay's us, a partition's ms, at_ms): up to
// a year is taken, anything longer is refused where its value starts, with the reason; a
// time can never overflow the clock it is added to.
#include "sim/fault/fault_rule.h"

#include <gtest/gtest.h>

#include <string>

namespace rpma_sim {
namespace {

std::string Refusal(const std::string& text) {
  FaultRule rule;
  std::string error;
  EXPECT_FALSE(ParseFaultRule(text, &rule, &error)) << text;
  return error;
}

TEST(FaultRuleTimeTest, AYearIsTheLongestTimeARuleTakes) {
  const std::string year_ms = std::to_string(kMaxRuleTimeMs);
  const std::string year_us = std::to_string(kMaxRuleTimeMs * 1000);
  FaultRule rule;
  std::string error;
  ASSERT_TRUE(ParseFaultRule("delay:us=" + year_us, &rule, &error)) << error;
  EXPECT_EQ(kMaxRuleTimeMs * 1000, rule.us_max);
  ASSERT_TRUE(ParseFaultRule("delay:us=1-" + year_us, &rule, &error)) << error;
  ASSERT_TRUE(ParseFaultRule("partition:ms=" + year_ms, &rule, &error)) << error;
  EXPECT_EQ(kMaxRuleTimeMs, rule.ms);
  ASSERT_TRUE(ParseFaultRule("lose:at_ms=" + year_ms, &rule, &error)) << error;
  EXPECT_EQ(static_cast<int64_t>(kMaxRuleTimeMs), rule.at_ms);
}

TEST(FaultRuleTimeTest, ALongerTimeIsRefusedWhereItsValueStarts) {
  const std::string over_ms = std::to_string(kMaxRuleTimeMs + 1);
  const std::string over_us = std::to_string(kMaxRuleTimeMs * 1000 + 1);
  // The case: 1e18 us, which once came out as about 123 years.
  std::string error = Refusal("delay:us=1000000000000000000");
  EXPECT_EQ(0u, error.find("at 10: us takes microseconds")) << error;
  EXPECT_NE(std::string::npos, error.find("longer than a year")) << error;
  error = Refusal("delay:us=" + over_us);
  EXPECT_EQ(0u, error.find("at 10: ")) << error;
  EXPECT_NE(std::string::npos, error.find("longer than a year")) << error;
  error = Refusal("delay:us=5-" + over_us);  // the MAX of a range
  EXPECT_EQ(0u, error.find("at 10: ")) << error;
  EXPECT_NE(std::string::npos, error.find(over_us)) << error;
  error = Refusal("partition:ms=" + over_ms);
  EXPECT_EQ(0u, error.find("at 14: ms takes milliseconds")) << error;
  EXPECT_NE(std::string::npos, error.find("longer than a year")) << error;
  error = Refusal("wc:status=IBV_WC_RETRY_EXC_ERR,at_ms=" + over_ms);
  EXPECT_EQ(0u, error.find("at 38: at_ms takes milliseconds")) << error;
  EXPECT_NE(std::string::npos, error.find("longer than a year")) << error;
  // 18 nines and 30: numbers, not times.
  error = Refusal("partition:ms=999999999999999999");
  EXPECT_NE(std::string::npos, error.find("longer than a year")) << error;
  error = Refusal("lose:at_ms=123456789012345678901234567890");
  EXPECT_NE(std::string::npos, error.find("longer than a year")) << error;
}

TEST(FaultRuleTimeTest, WhatIsNotANumberStillSaysSo) {
  EXPECT_NE(std::string::npos, Refusal("delay:us=ten").find("'ten' is not a whole number"));
  EXPECT_NE(std::string::npos, Refusal("partition:ms=0").find("0 is no time"));
  EXPECT_NE(std::string::npos, Refusal("delay:us=9-3").find("MIN above MAX"));
  EXPECT_NE(std::string::npos, Refusal("lose:at_ms=-5").find("'-5' is not a whole number"));
  // Leading zeros do not make a time longer.
  FaultRule rule;
  std::string error;
  ASSERT_TRUE(ParseFaultRule("partition:ms=0000000000000000000000007", &rule, &error)) << error;
  EXPECT_EQ(7u, rule.ms);
}

}  // namespace
}  // namespace rpma_sim
