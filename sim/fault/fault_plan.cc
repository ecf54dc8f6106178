// fault_plan.cc -- the rules in force, the seed, whether an event fires, and the gates of the
// call and connect seams (the stage seam's are in stage_faults.cc).
#include "sim/fault/fault_plan.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <chrono>

#include "sim/cm/connect_gate.h"
#include "sim/common/call_seam.h"
#include "sim/common/fork_generation.h"
#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/common/seeded_draw.h"
#include "sim/common/trace.h"
#include "sim/fault/call_errors.h"
#include "sim/fault/fault_gates.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/work_request_trace.h"

namespace rpma_sim {

FaultPlan& FaultPlan::Get() {
  // A fork child's plan is its own, read from the environment again, as a new process's
  // (but for the seed: InheritedSeed).
  static PerProcess<FaultPlan> plan;
  return plan.Get();
}

namespace {

// The seed of this process's plan, once it has one; a fork child's copy is its parent's
// seed at the fork.
std::atomic<bool> g_seed_known{false};
std::atomic<uint64_t> g_last_seed{0};

void NoteSeed(uint64_t seed) {
  g_last_seed.store(seed, std::memory_order_relaxed);
  g_seed_known.store(true, std::memory_order_release);
}

// In a fork child, the seed its parent's plan had at the fork: the child draws from it, as
// it would with RPMA_SIM_SEED set to it, so the seed the parent printed replays the
// children's choices too. False in the process that loaded the simulator, and in a child
// whose parent had no plan.
bool InheritedSeed(uint64_t* seed) {
  if (ForkGeneration() == 0 || !g_seed_known.load(std::memory_order_acquire)) return false;
  *seed = g_last_seed.load(std::memory_order_relaxed);
  return true;
}

// The longest file of rules RPMA_SIM_FAULTS=@path may name.
constexpr size_t kMaxRulesFile = 1 << 20;

// A seed as RPMA_SIM_SEED gives it: a decimal number, or a hexadecimal one after 0x; false
// for anything else (a sign, other characters, more than 64 bits).
bool ParseSeed(const char* text, uint64_t* seed) {
  int base = 10;
  if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text += 2;
  }
  if (!isxdigit(static_cast<unsigned char>(text[0]))) return false;  // no sign, no space
  char* end = nullptr;
  errno = 0;
  unsigned long long value = strtoull(text, &end, base);
  if (errno != 0 || *end != '\0') return false;
  *seed = value;
  return true;
}

// The whole of the file at `path` (at most kMaxRulesFile bytes) in *text; false, with *error
// saying why, if it cannot be read (a directory cannot).
bool ReadRulesFile(const std::string& path, std::string* text, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot read " + path + ": " + strerror(errno);
    return false;
  }
  char buffer[4096];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) *error = "cannot read " + path + ": " + strerror(errno);
    if (got <= 0) break;
    text->append(buffer, static_cast<size_t>(got));
    if (text->size() > kMaxRulesFile) {
      *error = path + " holds more than " + std::to_string(kMaxRulesFile) + " bytes of rules";
      break;
    }
  }
  close(fd);
  return error->empty();
}

}  // namespace

FaultPlan::FaultPlan() {
  const char* seed = getenv("RPMA_SIM_SEED");
  if (InheritedSeed(&seed_)) {
    // A fork child goes on with its parent's seed (RPMA_SIM_SEED's, or the one it drew or
    // was given by set_seed).
  } else if (seed != nullptr && *seed != '\0') {
    if (!ParseSeed(seed, &seed_)) seed_error_ = seed;
  } else if (getrandom(&seed_, sizeof(seed_), 0) != sizeof(seed_)) {
    seed_ = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  if (seed_error_.empty()) NoteSeed(seed_);
}

Status FaultPlan::LoadEnvironmentOnce() {
  std::call_once(environment_loaded_, [this] { environment_status_ = LoadEnvironment(); });
  return environment_status_;
}

Status FaultPlan::LoadEnvironment() {
  if (!seed_error_.empty()) {
    SIM_LOG_ERROR(
        "RPMA_SIM_SEED: '%s' is not a whole number (decimal, or hexadecimal after "
        "0x); every rpma_peer_new fails",
        seed_error_.c_str());
    return Status::kInvalid;
  }
  std::string rules;
  std::string error;
  if (!EnvironmentRules(&rules, &error)) {
    SIM_LOG_ERROR("RPMA_SIM_FAULTS: %s; every rpma_peer_new fails", error.c_str());
    return Status::kInvalid;
  }
  if (rules.empty()) return Status::kOk;
  if (AddRules(rules, &error) != Status::kOk) {
    SIM_LOG_ERROR("RPMA_SIM_FAULTS: %s; every rpma_peer_new fails", error.c_str());
    return Status::kInvalid;
  }
  return Status::kOk;
}

bool FaultPlan::EnvironmentRules(std::string* rules, std::string* error) {
  const char* value = getenv("RPMA_SIM_FAULTS");
  *rules = value != nullptr ? value : "";
  if (rules->empty() || (*rules)[0] != '@') return true;
  std::string text;
  if (!ReadRulesFile(rules->substr(1), &text, error)) return false;
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ';';  // a line is a rule
  *rules = std::move(text);
  return true;
}

Status FaultPlan::Add(const std::string& text, std::string* error) {
  // The environment's rules come first, also when code adds some before the first peer.
  (void)LoadEnvironmentOnce();
  return AddRules(text, error);
}

Status FaultPlan::AddRules(const std::string& text, std::string* error) {
  std::vector<FaultRule> rules;
  if (!ParseFaultRules(text, &rules, error)) return Status::kInvalid;
  // A power failure can only revert what was recorded: every node keeps pre-images from
  // before the rule is in force.
  for (const FaultRule& rule : rules)
    if (rule.kind == FaultKind::kPowerFailure) ArmAllForPowerFailure();
  std::string banner;
  {
    MutexLock lock(&mutex_);
    for (const FaultRule& rule : rules) rules_.push_back(Active{rule});
    if (rules_.empty()) return Status::kOk;
    if (!seed_printed_) {
      seed_printed_ = true;
      banner = "rpma-sim: fault injection with seed " + std::to_string(seed_) +
               " (RPMA_SIM_SEED=" + std::to_string(seed_) + " replays it); rules:";
      for (const Active& active : rules_) banner += " " + active.rule.text + ";";
    }
    InstallLocked();
  }
  // Whatever the log thresholds: a failing run must say how to replay it.
  if (!banner.empty()) fprintf(stderr, "%s\n", banner.c_str());
  for (const FaultRule& rule : rules) SIM_LOG_NOTICE("fault rule in force: %s", rule.text.c_str());
  return Status::kOk;
}

void FaultPlan::Clear() {
  // The environment's rules go too, also when they would only be read later.
  (void)LoadEnvironmentOnce();
  StopArmingNewForPowerFailure();  // nodes created from now on are not armed by rules
  std::vector<std::shared_ptr<StageHold>> cut_ends;
  {
    MutexLock lock(&mutex_);
    rules_.clear();
    per_connection_.clear();
    // The cuts that removed rules began end: what waits at them goes on (what already gives
    // up at its timeout still does).
    for (auto& entry : partitions_)
      for (const std::weak_ptr<StageHold>& waiting : entry.second.waiting)
        if (std::shared_ptr<StageHold> hold = waiting.lock()) cut_ends.push_back(hold);
    partitions_.clear();
    SetCallGate(nullptr);
    SetStageGate(nullptr);
    SetConnectGate(nullptr);
  }
  for (const std::shared_ptr<StageHold>& hold : cut_ends) hold->Release();
}

uint64_t FaultPlan::fired() {
  MutexLock lock(&mutex_);
  return fired_;
}

size_t FaultPlan::connection_counts() {
  MutexLock lock(&mutex_);
  return per_connection_.size();
}

uint64_t FaultPlan::seed() {
  MutexLock lock(&mutex_);
  return seed_;
}

void FaultPlan::set_seed(uint64_t seed) {
  MutexLock lock(&mutex_);
  // Rules added from now on draw as the first rules of a process started with
  // RPMA_SIM_SEED=seed do (a rule's draws depend on its place among the rules in force, not
  // on what was cleared before), so a test that sets the seed replays its choices.
  seed_ = seed;
  NoteSeed(seed);
  seed_printed_ = false;  // a run under the new seed must say how to replay it, too
}

void FaultPlan::InstallLocked() {
  static const auto gates = std::make_shared<FaultGates>();
  SetCallGate(gates);
  SetStageGate(gates);
  SetConnectGate(gates);
}

bool FaultPlan::FiresLocked(Active& active, uint64_t event, uint64_t stream) {
  const FaultRule& rule = active.rule;
  if (rule.times != 0 && active.fired >= rule.times) return false;
  if (rule.nth != 0 && event != rule.nth) return false;
  if (rule.after != 0 && event < rule.after) return false;
  if (rule.every != 0 && event % rule.every != 0) return false;
  if (rule.p < 1.0) {
    size_t index = static_cast<size_t>(&active - rules_.data());
    uint64_t draw = Draw(seed_, index, stream, event);
    if (static_cast<double>(draw >> 11) * 0x1.0p-53 >= rule.p) return false;
  }
  ++active.fired;
  ++fired_;
  return true;
}

Status FaultGates::Check(const char* function) {
  FaultPlan& plan = FaultPlan::Get();
  std::string message;
  Status error = Status::kOk;
  {
    MutexLock lock(&plan.mutex_);
    for (FaultPlan::Active& active : plan.rules_) {
      const FaultRule& rule = active.rule;
      if (rule.kind != FaultKind::kCall) continue;
      bool named =
          rule.function == "*" ? CanReturn(function, rule.error) : rule.function == function;
      if (!named) continue;
      // Every rule that names the call counts it; the first of them that fires decides.
      uint64_t event = ++active.events;
      if (error != Status::kOk || !plan.FiresLocked(active, event, 0)) continue;
      error = rule.error;
      message = "fault '" + rule.text + "' fired: " + function + " returns " + rule.error_name +
                " (call " + std::to_string(event) + ", seed " + std::to_string(plan.seed_) + ")";
    }
  }
  if (!message.empty()) Announce(message, std::nullopt);
  return error;
}

ConnectVerdict FaultGates::Check(ConnectionSide connection_side) {
  FaultPlan& plan = FaultPlan::Get();
  const bool server = connection_side == ConnectionSide::kServer;
  int side = server ? 1 : 0;
  std::string message;
  ConnectVerdict verdict = ConnectVerdict::kProceed;
  {
    MutexLock lock(&plan.mutex_);
    for (FaultPlan::Active& active : plan.rules_) {
      const FaultRule& rule = active.rule;
      if (!IsConnectKind(rule.kind) || rule.side != side) continue;
      // Every rule that selects the request counts it; the first of them that fires decides.
      uint64_t event = ++active.events;
      if (verdict != ConnectVerdict::kProceed ||
          !plan.FiresLocked(active, event, static_cast<uint64_t>(side)))
        continue;
      bool reject = rule.kind == FaultKind::kReject;
      verdict = reject ? ConnectVerdict::kReject : ConnectVerdict::kUnreachable;
      message = "fault '" + rule.text + "' fired: connection request " + std::to_string(event) +
                (server ? " arriving at this server" : " made by this client") +
                (reject ? " is rejected" : " finds its address unreachable") + " (seed " +
                std::to_string(plan.seed_) + ")";
    }
  }
  if (!message.empty()) Announce(message, std::nullopt);
  return verdict;
}

bool FaultPlan::PowerFailureBeforePersist(ProtectionDomain* pd) {
  if (LoadEnvironmentOnce() != Status::kOk) return false;
  FaultRule fired;
  uint64_t seed = 0;
  const uint64_t point = pd->persistence().points() + 1;
  {
    MutexLock lock(&mutex_);
    const Active* found = nullptr;
    for (Active& active : rules_) {
      const FaultRule& rule = active.rule;
      if (rule.kind != FaultKind::kPowerFailure || rule.point != point ||
          rule.SelectsOnlyWorkRequests())  // at=persist or not
        continue;
      // Every rule at this point counts it; the first of them that fires decides.
      const uint64_t event = ++active.events;
      if (found == nullptr && FiresLocked(active, event, 0)) found = &active;
    }
    if (found == nullptr) return false;
    fired = found->rule;
    seed = seed_;
  }
  FaultGates::Announce(
      "fault '" + fired.text + "' fired: rpma_sim_persist, crash point " + std::to_string(point) +
          ", cuts this node's power before it (loss=" + LossModeName(fired.loss) + ")",
      std::nullopt);
  const TornKeep kept{fired.keep_region, fired.keep_offset};
  pd->PowerFail(fired.loss, seed, fired.keep ? &kept : nullptr);
  if (fired.exit_status != 0) {
    trace::Close();  // the trace ends as it would at exit
    _exit(fired.exit_status);
  }
  return true;
}

void FaultGates::Announce(const std::string& message, std::optional<uint32_t> qp_num) {
  SIM_LOG_NOTICE("%s", message.c_str());
  if (!trace::On()) return;
  const std::string what = "\"what\":" + trace::Quote(message);
  if (qp_num)
    WorkRequestTrace::Instant(*qp_num, "fault", "fault fired", what);
  else
    trace::Instant(trace::kProcessTrack, "fault", "fault fired", what);
}

}  // namespace rpma_sim
