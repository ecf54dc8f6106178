// fault_rule_fuzzer.cc -- libFuzzer target: a fault plan's text as RPMA_SIM_FAULTS or
// rpma_sim_fault_add hand it over (sim/fault/fault_rule.h), through ParseFaultRules and, as one
// rule, ParseFaultRule.
//
// Invariants: parsing is all or nothing (a refused plan adds no rule); a refusal says where, at a
// position within the rule's text (or just past its end); every rule parsed keeps its own text,
// trimmed and without ';', and that text parses again, alone or as a plan, to an equal rule; a
// parsed rule is complete for its kind (rpma_sim(7)), and every time it names is
// at most a year (kMaxRuleTimeMs), which the clock can add to now.
#include <stdint.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "sim/fault/fault_rule.h"
#include "tests/fuzz/fuzz_check.h"

namespace rpma_sim {
namespace {

bool SameRule(const FaultRule& a, const FaultRule& b) {
  return a.kind == b.kind && a.text == b.text && a.function == b.function && a.error == b.error &&
         a.error_name == b.error_name && a.ops == b.ops && a.status == b.status &&
         a.us_min == b.us_min && a.us_max == b.us_max && a.ms == b.ms && a.loss == b.loss &&
         a.exit_status == b.exit_status && a.nth == b.nth && a.after == b.after &&
         a.every == b.every && a.p == b.p && a.times == b.times && a.conn == b.conn &&
         a.side == b.side && a.at_ms == b.at_ms && a.recv == b.recv && a.point == b.point &&
         a.keep == b.keep && a.keep_region == b.keep_region && a.keep_offset == b.keep_offset;
}

// What a rule of its kind cannot do without (the parser's CheckComplete, restated).
void CheckComplete(const FaultRule& rule) {
  FUZZ_CHECK(rule.p > 0.0 && rule.p <= 1.0);
  // Every time is one the clock can add to now (kMaxRuleTimeMs).
  FUZZ_CHECK(rule.us_max <= kMaxRuleTimeMs * 1000 && rule.ms <= kMaxRuleTimeMs);
  FUZZ_CHECK(rule.at_ms <= static_cast<int64_t>(kMaxRuleTimeMs));
  FUZZ_CHECK(rule.side >= -1 && rule.side <= 1);
  switch (rule.kind) {
    case FaultKind::kCall:
      FUZZ_CHECK(rule.error != Status::kOk && !rule.error_name.empty());
      break;
    case FaultKind::kWc:
      FUZZ_CHECK(rule.status != IBV_WC_SUCCESS);
      break;
    case FaultKind::kDelay:
      FUZZ_CHECK(rule.us_max > 0 && rule.us_min <= rule.us_max);
      break;
    case FaultKind::kPartition:
      FUZZ_CHECK(rule.ms > 0);
      break;
    case FaultKind::kReject:
    case FaultKind::kUnreachable:
      FUZZ_CHECK(rule.side == 0 || rule.side == 1);
      FUZZ_CHECK(rule.kind != FaultKind::kUnreachable || rule.side == 0);
      break;
    case FaultKind::kLose:
      FUZZ_CHECK(rule.exit_status >= 0 && rule.exit_status <= 255);
      break;
    case FaultKind::kPowerFailure:
      FUZZ_CHECK(rule.exit_status >= 0 && rule.exit_status <= 255);
      FUZZ_CHECK(!rule.keep || rule.loss == LossMode::kWords || rule.loss == LossMode::kLines);
      FUZZ_CHECK(!rule.keep || rule.keep_region != 0);
      break;
  }
}

// "at N: why", N from 1 to one past the end of `text`.
void CheckErrorPosition(const std::string& text, const std::string& error) {
  FUZZ_CHECK(error.compare(0, 3, "at ") == 0);
  char* end = nullptr;
  unsigned long long position = strtoull(error.c_str() + 3, &end, 10);
  FUZZ_CHECK(end != error.c_str() + 3 && *end == ':');
  FUZZ_CHECK(position >= 1 && position <= text.size() + 1);
}

void CheckRule(const FaultRule& rule) {
  FUZZ_CHECK(!rule.text.empty() && rule.text.find(';') == std::string::npos);
  FUZZ_CHECK(rule.text.find_first_of(" \t\n") != 0);
  FUZZ_CHECK(rule.text.find_last_not_of(" \t\n") == rule.text.size() - 1);
  CheckComplete(rule);
  FaultRule again;
  std::string error;
  FUZZ_CHECK(ParseFaultRule(rule.text, &again, &error));
  FUZZ_CHECK(SameRule(rule, again));
  std::vector<FaultRule> plan;
  FUZZ_CHECK(ParseFaultRules(rule.text, &plan, &error));
  FUZZ_CHECK(plan.size() == 1 && SameRule(rule, plan[0]));
}

}  // namespace
}  // namespace rpma_sim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rpma_sim;
  const std::string text(reinterpret_cast<const char*>(data), size);

  FaultRule one;
  std::string error;
  if (ParseFaultRule(text, &one, &error))
    CheckRule(one);
  else
    CheckErrorPosition(text, error);

  // Rules already in the plan stay as they were, whatever the new text holds.
  std::vector<FaultRule> rules(1);
  error.clear();
  if (!ParseFaultRules(text, &rules, &error)) {
    FUZZ_CHECK(!error.empty() && rules.size() == 1);
    return 0;
  }
  std::string joined;
  for (size_t i = 1; i < rules.size(); ++i) {
    CheckRule(rules[i]);
    joined += (i > 1 ? ";" : "") + rules[i].text;
  }
  std::vector<FaultRule> again;
  FUZZ_CHECK(ParseFaultRules(joined, &again, &error));
  FUZZ_CHECK(again.size() == rules.size() - 1);
  for (size_t i = 0; i < again.size(); ++i) FUZZ_CHECK(SameRule(again[i], rules[i + 1]));
  return 0;
}
