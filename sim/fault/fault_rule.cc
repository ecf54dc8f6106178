// fault_rule.cc -- the grammar of fault rules: `kind:key=value,...`.
#include "sim/fault/fault_rule.h"

#include <stdlib.h>

#include <map>

#include "sim/fault/call_errors.h"
#include "sim/verbs/stage_gate.h"

namespace rpma_sim {
namespace {

struct Named {
  const char* name;
  int value;
};

const Named kKinds[] = {{"call", static_cast<int>(FaultKind::kCall)},
                        {"wc", static_cast<int>(FaultKind::kWc)},
                        {"delay", static_cast<int>(FaultKind::kDelay)},
                        {"lose", static_cast<int>(FaultKind::kLose)},
                        {"reject", static_cast<int>(FaultKind::kReject)},
                        {"unreachable", static_cast<int>(FaultKind::kUnreachable)},
                        {"partition", static_cast<int>(FaultKind::kPartition)},
                        {"power_failure", static_cast<int>(FaultKind::kPowerFailure)}};

const Named kLosses[] = {{"all", static_cast<int>(LossMode::kAll)},
                         {"words", static_cast<int>(LossMode::kWords)},
                         {"lines", static_cast<int>(LossMode::kLines)},
                         {"none", static_cast<int>(LossMode::kNone)}};

const Named kErrors[] = {
    {"RPMA_E_UNKNOWN", static_cast<int>(Status::kUnknown)},
    {"RPMA_E_NOSUPP", static_cast<int>(Status::kNotSupported)},
    {"RPMA_E_PROVIDER", static_cast<int>(Status::kProvider)},
    {"RPMA_E_NOMEM", static_cast<int>(Status::kNoMemory)},
    {"RPMA_E_INVAL", static_cast<int>(Status::kInvalid)},
    {"RPMA_E_NO_COMPLETION", static_cast<int>(Status::kNoCompletion)},
    {"RPMA_E_NO_EVENT", static_cast<int>(Status::kNoEvent)},
    {"RPMA_E_AGAIN", static_cast<int>(Status::kAgain)},
    {"RPMA_E_SHARED_CHANNEL", static_cast<int>(Status::kSharedChannel)},
    {"RPMA_E_NOT_SHARED_CHNL", static_cast<int>(Status::kNotSharedChannel)},
};

const Named kOps[] = {{"write", static_cast<int>(SendOpcode::kWrite)},
                      {"read", static_cast<int>(SendOpcode::kRead)},
                      {"send", static_cast<int>(SendOpcode::kSend)},
                      {"flush", static_cast<int>(SendOpcode::kFlush)},
                      {"atomic_write", static_cast<int>(SendOpcode::kAtomicWrite)}};

constexpr uint32_t kOneSidedOps = (1u << static_cast<int>(SendOpcode::kWrite)) |
                                  (1u << static_cast<int>(SendOpcode::kRead)) |
                                  (1u << static_cast<int>(SendOpcode::kFlush)) |
                                  (1u << static_cast<int>(SendOpcode::kAtomicWrite));

// The statuses a `wc` rule can give: the requester's own errors and retries exceeded (its
// queue pair alone fails), IBV_WC_REM_ACCESS_ERR (both fail, as after a bad key) and the
// other remote errors (the responder answers with them; both fail).
const Named kStatuses[] = {
    {"IBV_WC_LOC_LEN_ERR", IBV_WC_LOC_LEN_ERR},
    {"IBV_WC_LOC_QP_OP_ERR", IBV_WC_LOC_QP_OP_ERR},
    {"IBV_WC_LOC_PROT_ERR", IBV_WC_LOC_PROT_ERR},
    {"IBV_WC_MW_BIND_ERR", IBV_WC_MW_BIND_ERR},
    {"IBV_WC_BAD_RESP_ERR", IBV_WC_BAD_RESP_ERR},
    {"IBV_WC_LOC_ACCESS_ERR", IBV_WC_LOC_ACCESS_ERR},
    {"IBV_WC_REM_ACCESS_ERR", IBV_WC_REM_ACCESS_ERR},
    {"IBV_WC_REM_INV_REQ_ERR", IBV_WC_REM_INV_REQ_ERR},
    {"IBV_WC_REM_OP_ERR", IBV_WC_REM_OP_ERR},
    {"IBV_WC_RETRY_EXC_ERR", IBV_WC_RETRY_EXC_ERR},
    {"IBV_WC_RNR_RETRY_EXC_ERR", IBV_WC_RNR_RETRY_EXC_ERR},
    {"IBV_WC_FATAL_ERR", IBV_WC_FATAL_ERR},
    {"IBV_WC_RESP_TIMEOUT_ERR", IBV_WC_RESP_TIMEOUT_ERR},
    {"IBV_WC_GENERAL_ERR", IBV_WC_GENERAL_ERR},
};

template <size_t N>
bool Lookup(const Named (&table)[N], const std::string& name, int* value) {
  for (const Named& entry : table) {
    if (name == entry.name) {
      *value = entry.value;
      return true;
    }
  }
  return false;
}

bool ParseCount(const std::string& text, uint64_t* value) {
  if (text.empty() || text.size() > 18) return false;
  for (char c : text)
    if (c < '0' || c > '9') return false;
  *value = strtoull(text.c_str(), nullptr, 10);
  return true;
}

// A time of `text` in units of which `per_ms` make a millisecond, at most kMaxRuleTimeMs.
// False with *reason when the text is not a number or not a time.
bool ParseTime(const std::string& text, uint64_t per_ms, uint64_t* value, std::string* reason) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    *reason = "'" + text + "' is not a whole number";
    return false;
  }
  const uint64_t limit = kMaxRuleTimeMs * per_ms;
  const size_t first = text.find_first_not_of('0');
  const std::string number = first == std::string::npos ? "0" : text.substr(first);
  // ParseCount takes up to 18 digits; the limit has fewer, so a longer number is over it.
  if (!ParseCount(number, value) || *value > limit) {
    *reason = "'" + text + "' is longer than a year (" + std::to_string(limit) +
              "), which the simulator's clock cannot add to now";
    return false;
  }
  return true;
}

// One key=value of a rule, and where it starts.
struct Param {
  std::string key;
  std::string value;
  size_t position;  // 1-based, in the rule's text
};

class RuleParser {
 public:
  RuleParser(const std::string& text, FaultRule* rule, std::string* error)
      : text_(text), rule_(rule), error_(error) {}

  bool Parse() {
    rule_->text = text_;
    size_t colon = text_.find(':');
    std::string kind = text_.substr(0, colon);
    int value;
    if (!Lookup(kKinds, kind, &value))
      return Fail(1, "unknown kind '" + kind +
                         "' (call, wc, delay, lose, reject, unreachable, partition or "
                         "power_failure)");
    rule_->kind = static_cast<FaultKind>(value);
    std::vector<Param> params;
    if (colon != std::string::npos && !SplitParams(colon + 1, &params)) return false;
    for (const Param& param : params)
      if (!Apply(param)) return false;
    return CheckComplete();
  }

 private:
  bool Fail(size_t position, const std::string& reason) {
    *error_ = "at " + std::to_string(position) + ": " + reason;
    return false;
  }

  bool SplitParams(size_t start, std::vector<Param>* params) {
    while (start <= text_.size()) {
      size_t comma = text_.find(',', start);
      size_t end = comma == std::string::npos ? text_.size() : comma;
      std::string item = text_.substr(start, end - start);
      size_t equals = item.find('=');
      if (equals == std::string::npos || equals == 0)
        return Fail(start + 1, "expected key=value, found '" + item + "'");
      for (const Param& seen : *params)
        if (seen.key == item.substr(0, equals))
          return Fail(start + 1, "'" + seen.key + "' given twice");
      params->push_back(Param{item.substr(0, equals), item.substr(equals + 1), start + 1});
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return true;
  }

  bool Apply(const Param& param) {
    const std::string& key = param.key;
    const std::string& value = param.value;
    size_t at = param.position + key.size() + 1;  // where the value starts
    if (IsConnectKind(rule_->kind) && (key == "conn" || key == "at_ms" || key == "op"))
      return Fail(param.position, "'" + key + "' selects a connection's work requests; a " +
                                      "connection request has none");
    if (rule_->kind == FaultKind::kCall && (key == "conn" || key == "at_ms" || key == "side"))
      return Fail(param.position, "'" + key + "' selects a connection's work requests or " +
                                      "requests; a call has neither");
    if (key == "nth" || key == "after" || key == "every" || key == "times" || key == "conn") {
      uint64_t n;
      if (!ParseCount(value, &n) || n == 0)
        return Fail(at, key + " takes a whole number from 1, not '" + value + "'");
      uint64_t* field = key == "nth"     ? &rule_->nth
                        : key == "after" ? &rule_->after
                        : key == "every" ? &rule_->every
                        : key == "times" ? &rule_->times
                                         : &rule_->conn;
      *field = n;
      return true;
    }
    if (key == "p") {
      char* end = nullptr;
      double p = strtod(value.c_str(), &end);
      // All of the value, not up to a NUL inside it (tests/fuzz/corpus/fault_rule/
      // regression_nul_in_p: "p=1.\0...;" was taken as p=1 with the rest ignored).
      if (value.empty() || end != value.c_str() + value.size() || !(p > 0.0 && p <= 1.0))
        return Fail(at, "p takes a probability in (0, 1], not '" + value + "'");
      rule_->p = p;
      return true;
    }
    if (key == "side") {
      if (value != "client" && value != "server")
        return Fail(at, "side is client or server, not '" + value + "'");
      rule_->side = value == "server" ? 1 : 0;
      if (rule_->kind == FaultKind::kUnreachable && rule_->side == 1)
        return Fail(at, "only the client can find an address unreachable");
      return true;
    }
    if (key == "at_ms") {
      uint64_t ms;
      std::string reason;
      if (!ParseTime(value, 1, &ms, &reason))
        return Fail(at, "at_ms takes milliseconds: " + reason);
      rule_->at_ms = static_cast<int64_t>(ms);
      return true;
    }
    if (rule_->kind == FaultKind::kCall) return ApplyCall(param, at);
    if (key == "op") return ApplyOps(value, at);
    if (key == "status" && rule_->kind == FaultKind::kWc) {
      int status;
      if (!Lookup(kStatuses, value, &status))
        return Fail(at,
                    "status '" + value + "' cannot be injected (rpma_sim(7) lists those that can)");
      rule_->status = static_cast<ibv_wc_status>(status);
      status_at_ = at;
      return true;
    }
    if (key == "ms" && rule_->kind == FaultKind::kPartition) {
      std::string reason = "0 is no time";
      if (!ParseTime(value, 1, &rule_->ms, &reason) || rule_->ms == 0)
        return Fail(at, "ms takes milliseconds from 1: " + reason);
      return true;
    }
    if (rule_->kind == FaultKind::kPowerFailure) return ApplyPowerFailure(param, at);
    if (key == "us" && rule_->kind == FaultKind::kDelay) {
      size_t dash = value.find('-');
      std::string low = value.substr(0, dash);
      std::string high = dash == std::string::npos ? low : value.substr(dash + 1);
      std::string reason = "'" + value + "' has MIN above MAX";
      if (!ParseTime(low, 1000, &rule_->us_min, &reason) ||
          !ParseTime(high, 1000, &rule_->us_max, &reason) || rule_->us_max < rule_->us_min)
        return Fail(at, "us takes microseconds N or MIN-MAX: " + reason);
      return true;
    }
    return Fail(param.position, "unknown key '" + key + "' for this kind");
  }

  bool ApplyCall(const Param& param, size_t at) {
    if (param.key == "fn") {
      if (param.value != "*" && !IsLibrpmaFunction(param.value))
        return Fail(at, "'" + param.value + "' is not a librpma function that returns an error");
      rule_->function = param.value;
      return true;
    }
    if (param.key == "err") {
      int error;
      if (!Lookup(kErrors, param.value, &error))
        return Fail(at, "unknown error code '" + param.value + "'");
      rule_->error = static_cast<Status>(error);
      rule_->error_name = param.value;
      error_at_ = at;
      return true;
    }
    return Fail(param.position, "unknown key '" + param.key + "' for this kind");
  }

  bool ApplyPowerFailure(const Param& param, size_t at) {
    if (param.key == "loss" || param.key == "mode") {
      if (loss_given_) return Fail(param.position, "loss and mode are one key, given twice");
      loss_given_ = true;
      int loss;
      if (!Lookup(kLosses, param.value, &loss))
        return Fail(at, "loss is all, words, lines or none, not '" + param.value + "'");
      rule_->loss = static_cast<LossMode>(loss);
      return true;
    }
    if (param.key == "exit") {
      uint64_t status;
      if (!ParseCount(param.value, &status) || status > 255)
        return Fail(at, "exit takes a process exit status 0-255, not '" + param.value + "'");
      rule_->exit_status = static_cast<int>(status);
      return true;
    }
    if (param.key == "point") {
      if (!ParseCount(param.value, &rule_->point) || rule_->point == 0)
        return Fail(at, "point takes a crash point from 1, not '" + param.value + "'");
      return true;
    }
    if (param.key == "at") {
      if (param.value != "persist")
        return Fail(at,
                    "at is persist (the point is an rpma_sim_persist), not '" + param.value + "'");
      rule_->at_persist = true;
      at_persist_at_ = at;
      return true;
    }
    if (param.key == "keep") {
      // REGION:OFFSET: the node's REGIONth registration (from 1), a byte offset in it.
      size_t colon = param.value.find(':');
      uint64_t region = 0;
      if (colon == std::string::npos || !ParseCount(param.value.substr(0, colon), &region) ||
          region == 0 || region > UINT32_MAX ||
          !ParseCount(param.value.substr(colon + 1), &rule_->keep_offset))
        return Fail(at,
                    "keep takes a region (its place among the node's registrations, from "
                    "1) and an offset, REGION:OFFSET, not '" +
                        param.value + "'");
      rule_->keep = true;
      rule_->keep_region = static_cast<uint32_t>(region);
      keep_at_ = at;
      return true;
    }
    return Fail(param.position, "unknown key '" + param.key + "' for this kind");
  }

  bool ApplyOps(const std::string& value, size_t at) {
    uint32_t ops = 0;
    size_t start = 0;
    for (;;) {
      size_t bar = value.find('|', start);
      std::string name =
          value.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
      int op;
      if (name == "*") {
        ops = ~0u;
      } else if (Lookup(kOps, name, &op)) {
        ops |= 1u << op;
      } else if (name == "recv") {
        if (rule_->kind != FaultKind::kWc)
          return Fail(at + start, "op recv is for wc rules (a receive fails at its receiver)");
        if (start != 0 || bar != std::string::npos)
          return Fail(at + start, "op recv stands alone (its rule acts at the receiver)");
        rule_->recv = true;
      } else {
        return Fail(at + start, "unknown op '" + name + "'");
      }
      if (bar == std::string::npos) break;
      start = bar + 1;
    }
    rule_->ops = ops;
    ops_at_ = at;
    return true;
  }

  bool CheckComplete() {
    size_t end = text_.size() + 1;
    switch (rule_->kind) {
      case FaultKind::kCall:
        if (rule_->error == Status::kOk) return Fail(end, "a call rule needs err=RPMA_E_...");
        if (rule_->function != "*" && !CanReturn(rule_->function, rule_->error))
          return Fail(error_at_,
                      rule_->function + " cannot return " + rule_->error_name + " in librpma 1.3");
        return true;
      case FaultKind::kWc:
        if (rule_->status == IBV_WC_SUCCESS) return Fail(end, "a wc rule needs status=IBV_WC_...");
        if (rule_->recv && !IsReceiverStatus(rule_->status))
          return Fail(status_at_,
                      "a receive fails with IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_PROT_ERR, "
                      "IBV_WC_LOC_QP_OP_ERR or IBV_WC_GENERAL_ERR");
        if (!rule_->recv && rule_->status == IBV_WC_REM_ACCESS_ERR &&
            (rule_->ops & ~kOneSidedOps) != 0)
          return Fail(ops_at_ ? ops_at_ : end,
                      "IBV_WC_REM_ACCESS_ERR needs one-sided ops (write, read, flush, "
                      "atomic_write)");
        return true;
      case FaultKind::kDelay:
        if (rule_->us_max == 0) return Fail(end, "a delay rule needs us=N or us=MIN-MAX");
        return true;
      case FaultKind::kLose:
        return true;
      case FaultKind::kPowerFailure:
        if (rule_->keep && rule_->loss != LossMode::kWords && rule_->loss != LossMode::kLines)
          return Fail(keep_at_, "keep names the word or line that survives: loss=words or lines");
        if (rule_->at_persist && (rule_->point == 0 || rule_->SelectsOnlyWorkRequests()))
          return Fail(at_persist_at_,
                      "at=persist names a point (point=K) that no connection makes: no side, "
                      "conn, op or at_ms");
        return true;
      case FaultKind::kPartition:
        if (rule_->ms == 0) return Fail(end, "a partition rule needs ms=N");
        return true;
      case FaultKind::kReject:
      case FaultKind::kUnreachable:
        if (rule_->side < 0) rule_->side = 0;
        return true;
    }
    return true;
  }

  const std::string& text_;
  FaultRule* rule_;
  std::string* error_;
  size_t error_at_ = 0;
  size_t ops_at_ = 0;
  size_t status_at_ = 0;
  size_t keep_at_ = 0;
  size_t at_persist_at_ = 0;
  bool loss_given_ = false;  // by loss= or mode=, its other name
};

}  // namespace

const char* InjectableStatusName(ibv_wc_status status) {
  for (const Named& entry : kStatuses)
    if (entry.value == status) return entry.name;
  return "?";
}

bool ParseFaultRule(const std::string& text, FaultRule* rule, std::string* error) {
  *rule = FaultRule();
  return RuleParser(text, rule, error).Parse();
}

bool ParseFaultRules(const std::string& text, std::vector<FaultRule>* rules, std::string* error) {
  std::vector<FaultRule> parsed;
  size_t start = 0;
  while (start <= text.size()) {
    size_t semicolon = text.find(';', start);
    std::string one =
        text.substr(start, semicolon == std::string::npos ? std::string::npos : semicolon - start);
    size_t first = one.find_first_not_of(" \t\n");
    if (first != std::string::npos) {
      size_t last = one.find_last_not_of(" \t\n");
      FaultRule rule;
      if (!ParseFaultRule(one.substr(first, last - first + 1), &rule, error)) {
        *error = "rule " + std::to_string(parsed.size() + 1) + " '" +
                 one.substr(first, last - first + 1) + "' " + *error;
        return false;
      }
      parsed.push_back(std::move(rule));
    }
    if (semicolon == std::string::npos) break;
    start = semicolon + 1;
  }
  rules->insert(rules->end(), parsed.begin(), parsed.end());
  return true;
}

}  // namespace rpma_sim
