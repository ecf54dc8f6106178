// fault_plan.cc -- matching events against the rules, the seed, and the gates in the seams.
#include "sim/fault/fault_plan.h"
#include "sim/common/mutex.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <fstream>
#include <sstream>

#include "sim/cm/connect_gate.h"
#include "sim/common/call_seam.h"
#include "sim/common/log.h"
#include "sim/common/per_process.h"
#include "sim/common/seeded_draw.h"
#include "sim/common/trace.h"
#include "sim/fabric/io_service.h"
#include "sim/fault/call_errors.h"
#include "sim/verbs/queue_pair.h"
#include "sim/verbs/stage_gate.h"
#include "sim/verbs/work_request_trace.h"

namespace rpma_sim {
namespace {

// Where a work request's rule applies: a bad key (so the responder refuses it, as hardware
// does), a remote error the responder answers with and the requester's own errors (the
// request never leaves) at submission; retries exceeded and the other statuses and delays at
// completion (the request was carried, and may have executed); losses at submission.
// Whether executing `point`'s request at its responder makes the responder's node's crash
// point `crash_point` (a placement or a flush, crash_journal.h): a power_failure rule's
// `point=` fires just before it.
bool AtCrashPoint(const StagePoint& point, uint64_t crash_point) {
  const SendRequest& request = *point.request;
  const bool makes_one =
      request.opcode == SendOpcode::kFlush || request.opcode == SendOpcode::kAtomicWrite ||
      ((request.opcode == SendOpcode::kWrite || request.opcode == SendOpcode::kSend) &&
       request.length > 0);
  return makes_one && point.qp->pd()->persistence().points() + 1 == crash_point;
}

bool AppliesAt(const FaultRule& rule, Stage stage) {
  switch (rule.kind) {
    case FaultKind::kWc:
      if (rule.recv) return stage == Stage::kExecute;  // at the receiver
      // Remote errors leave with the request (the responder answers with them).
      return stage == (rule.status == IBV_WC_REM_ACCESS_ERR || IsResponderStatus(rule.status) ||
                               IsLocalRequesterStatus(rule.status)
                           ? Stage::kSubmit
                           : Stage::kComplete);
    case FaultKind::kDelay:
      return stage == Stage::kComplete;
    case FaultKind::kLose:
    case FaultKind::kPartition:
      return stage == Stage::kSubmit;
    case FaultKind::kPowerFailure:
      return stage == Stage::kExecute;  // where it would land
    case FaultKind::kCall:
    case FaultKind::kReject:
    case FaultKind::kUnreachable:
      return false;
  }
  return false;
}

// A link is the same whichever of its two nodes looks at it.
ConnectionTag::Link Undirected(const ConnectionTag::Link& link) {
  return link.local < link.remote ? link : ConnectionTag::Link{link.remote, link.local};
}

const char* OpName(SendOpcode opcode) {
  switch (opcode) {
    case SendOpcode::kWrite:
      return "write";
    case SendOpcode::kRead:
      return "read";
    case SendOpcode::kSend:
      return "send";
    case SendOpcode::kFlush:
      return "flush";
    case SendOpcode::kAtomicWrite:
      return "atomic_write";
  }
  return "?";
}

}  // namespace

// The plan's hooks in the three seams.
class FaultGates : public CallGate, public StageGate, public ConnectGate {
 public:
  Status Check(const char* function) override;
  std::shared_ptr<StageHold> Check(const StagePoint& point) override;
  ConnectVerdict Check(ConnectionSide side) override;
};

FaultPlan& FaultPlan::Get() {
  // A fork child's plan is its own, read from the environment again, as a new process's.
  static PerProcess<FaultPlan> plan;
  return plan.Get();
}

FaultPlan::FaultPlan() {
  const char* seed = getenv("RPMA_SIM_SEED");
  if (seed != nullptr && *seed != '\0') {
    seed_ = strtoull(seed, nullptr, 0);
  } else if (getrandom(&seed_, sizeof(seed_), 0) != sizeof(seed_)) {
    seed_ = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
}

Status FaultPlan::LoadEnvironmentOnce() {
  std::call_once(environment_loaded_, [this] { environment_status_ = LoadEnvironment(); });
  return environment_status_;
}

Status FaultPlan::LoadEnvironment() {
  std::string rules;
  std::string error;
  if (!EnvironmentRules(&rules, &error)) {
    SIM_LOG_ERROR("RPMA_SIM_FAULTS: %s; every rpma_peer_new fails", error.c_str());
    return Status::kInvalid;
  }
  if (rules.empty()) return Status::kOk;
  if (Add(rules, &error) != Status::kOk) {
    SIM_LOG_ERROR("RPMA_SIM_FAULTS: %s; every rpma_peer_new fails", error.c_str());
    return Status::kInvalid;
  }
  return Status::kOk;
}

bool FaultPlan::EnvironmentRules(std::string* rules, std::string* error) {
  const char* value = getenv("RPMA_SIM_FAULTS");
  *rules = value != nullptr ? value : "";
  if (rules->empty() || (*rules)[0] != '@') return true;
  std::ifstream file(rules->substr(1));
  if (!file) {
    *error = "cannot read " + rules->substr(1);
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  *rules = text.str();
  for (char& c : *rules)
    if (c == '\n') c = ';';
  return true;
}

Status FaultPlan::Add(const std::string& text, std::string* error) {
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
  StopArmingNewForPowerFailure();  // nodes created from now on are not armed by rules
  MutexLock lock(&mutex_);
  rules_.clear();
  per_connection_.clear();
  ++generation_;
  SetCallGate(nullptr);
  SetStageGate(nullptr);
  SetConnectGate(nullptr);
}

uint64_t FaultPlan::fired() {
  MutexLock lock(&mutex_);
  return fired_;
}

uint64_t FaultPlan::seed() {
  MutexLock lock(&mutex_);
  return seed_;
}

void FaultPlan::set_seed(uint64_t seed) {
  MutexLock lock(&mutex_);
  seed_ = seed;
  // Rules added from now on draw as the first rules of a process started with
  // RPMA_SIM_SEED=seed do, so a test that sets the seed replays its choices.
  generation_ = 0;
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
    uint64_t draw = Draw(seed_, (generation_ << 32) | index, stream, event);
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
      uint64_t event = ++active.events;
      if (!plan.FiresLocked(active, event, 0)) continue;
      error = rule.error;
      message = "fault '" + rule.text + "' fired: " + function + " returns " + rule.error_name +
                " (call " + std::to_string(event) + ", seed " + std::to_string(plan.seed_) + ")";
      break;
    }
  }
  if (!message.empty()) SIM_LOG_NOTICE("%s", message.c_str());
  if (!message.empty() && trace::On())
    trace::Instant(trace::kProcessTrack, "fault", "fault fired",
                   "\"what\":" + trace::Quote(message));
  return error;
}

std::shared_ptr<StageHold> FaultGates::Check(const StagePoint& point) {
  FaultPlan& plan = FaultPlan::Get();
  point.qp->execution().AssertHeld();  // the stage seam runs under it (stage_gate.h)
  const ConnectionTag& tag = point.qp->tag_locked();
  int side = tag.side == ConnectionSide::kServer ? 1 : 0;
  int64_t since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - tag.established)
                         .count();
  std::string message;
  std::shared_ptr<StageHold> hold;
  std::shared_ptr<NodeMember> lost;
  std::unique_ptr<FaultRule> power_failure;  // a copy: the rules may change once unlocked
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
  FaultPlan::PartitionHold cut;  // at a cut link: the hold, and when it gives up
  {
    MutexLock lock(&plan.mutex_);
    ConnectionTag::Link link = Undirected(tag.link);
    auto partition = plan.partitions_.find(link);
    if (partition != plan.partitions_.end() && now >= partition->second.end)
      plan.partitions_.erase(partition);
    else if (partition != plan.partitions_.end())
      cut = plan.HoldAtPartitionLocked(partition->second, point.qp, tag, now);
    hold = cut.hold;  // a cut link holds every stage: no rule is asked
    for (size_t index = 0; !hold && index < plan.rules_.size(); ++index) {
      FaultPlan::Active& active = plan.rules_[index];
      const FaultRule& rule = active.rule;
      if (!AppliesAt(rule, point.stage) || !rule.Matches(*point.request)) continue;
      if ((rule.side >= 0 && rule.side != side) || (rule.conn != 0 && rule.conn != tag.ordinal) ||
          (rule.at_ms >= 0 && since_ms < rule.at_ms) ||
          (rule.point != 0 && !AtCrashPoint(point, rule.point)))
        continue;
      uint64_t event = ++plan.per_connection_[FaultPlan::ConnectionKey(index, side, tag.ordinal)];
      uint64_t stream = (static_cast<uint64_t>(side) << 63) | tag.ordinal;
      if (!plan.FiresLocked(active, event, stream)) continue;
      std::string what;
      switch (rule.kind) {
        case FaultKind::kWc:
          *point.fail = rule.status;
          what = std::string(rule.recv ? "fails its receive with " : "completes with ") +
                 InjectableStatusName(rule.status);
          break;
        case FaultKind::kDelay: {
          uint64_t span = rule.us_max - rule.us_min + 1;
          uint64_t us = rule.us_min + Draw(plan.seed_, ~index, stream, event) % span;
          hold = StageHold::For(std::chrono::microseconds(us));
          what = "completes " + std::to_string(us) + " us late";
          break;
        }
        case FaultKind::kLose:
          lost = tag.connection.lock();
          hold = StageHold::UntilReleased();  // never: the loss flushes it
          what = "loses its connection";
          break;
        case FaultKind::kPartition: {
          // Every connection between the two nodes waits; shorter than a connection's
          // timeout that only delays, as long or longer its requester gives up at the
          // timeout, as hardware does after its retries.
          FaultPlan::Partition& partition = plan.partitions_[link];
          partition.end = std::max(partition.end, now + std::chrono::milliseconds(rule.ms));
          cut = plan.HoldAtPartitionLocked(partition, point.qp, tag, now);
          hold = cut.hold;
          bool ends = rule.ms >= static_cast<uint64_t>(tag.timeout_ms);
          what = "cuts the link between its two nodes for " + std::to_string(rule.ms) + " ms" +
                 (ends ? " (the connection's timeout is " + std::to_string(tag.timeout_ms) +
                             " ms: retries exceeded, then lost)"
                       : "");
          break;
        }
        case FaultKind::kPowerFailure:
          power_failure.reset(new FaultRule(rule));
          hold = StageHold::UntilReleased();  // never lands: the failure flushes it
          what = std::string("cuts this node's power before it lands (loss=") +
                 LossModeName(rule.loss) + ")" +
                 (rule.exit_status != 0
                      ? ", then the process exits with status " + std::to_string(rule.exit_status)
                      : "");
          break;
        case FaultKind::kCall:
        case FaultKind::kReject:
        case FaultKind::kUnreachable:
          break;
      }
      message = "fault '" + rule.text + "' fired: " + OpName(point.request->opcode) + " " +
                std::to_string(event) + " of " + (side ? "server" : "client") + " connection " +
                std::to_string(tag.ordinal) + " " + what + " (seed " + std::to_string(plan.seed_) +
                ")";
      break;
    }
  }
  if (!message.empty()) SIM_LOG_NOTICE("%s", message.c_str());
  if (!message.empty() && trace::On())
    WorkRequestTrace::Instant(point.qp->qp_num(), "fault", "fault fired",
                              "\"what\":" + trace::Quote(message));
  if (power_failure) {
    // The node's connections are lost and its memory reverted on the progress engine, away
    // from the locks held here.
    // The queue pair is kept alive for it: its node must fail even if it is destroyed now.
    std::shared_ptr<QueuePair> target =
        std::const_pointer_cast<QueuePair>(point.qp->shared_from_this());
    LossMode loss = power_failure->loss;
    int exit_status = power_failure->exit_status;
    uint64_t seed = plan.seed();
    const bool keep = power_failure->keep;
    const TornKeep kept{power_failure->keep_region, power_failure->keep_offset};
    EnsureProgressEngine();
    boost::asio::post(IoContext(), [target, loss, exit_status, seed, keep, kept] {
      if (target->pd()->PowerFail(loss, seed, keep ? &kept : nullptr) != Status::kOk) {
        // Not armed (cannot happen while the rule is in force): the held request fails.
        target->EnterError(IBV_WC_GENERAL_ERR);
        if (exit_status != 0) SIM_LOG_ERROR("power failure: memory not reverted before exit");
      }
      if (exit_status != 0) {
        trace::Close();  // the trace ends as it would at exit
        _exit(exit_status);
      }
    });
  }
  // The connection manager's lock comes before the execution lock held here: the loss
  // runs on the progress engine.
  if (cut.give_up_at != std::chrono::steady_clock::time_point()) {
    // Retries exceeded: the first outstanding request fails so, the rest are flushed, and
    // the connection is lost on both sides.
    std::weak_ptr<QueuePair> qp = std::const_pointer_cast<QueuePair>(point.qp->shared_from_this());
    std::weak_ptr<NodeMember> connection = tag.connection;
    RunAt(cut.give_up_at, [qp, connection] {
      if (std::shared_ptr<QueuePair> cut = qp.lock()) cut->EnterError(IBV_WC_RETRY_EXC_ERR);
      if (std::shared_ptr<NodeMember> member = connection.lock()) member->OnNodeFailed();
    });
  } else if (lost) {
    EnsureProgressEngine();
    boost::asio::post(IoContext(), [lost] { lost->OnNodeFailed(); });
  }
  return hold;
}

FaultPlan::PartitionHold FaultPlan::HoldAtPartitionLocked(
    Partition& cut, const QueuePair* qp, const ConnectionTag& tag,
    std::chrono::steady_clock::time_point now) {
  auto giving_up = cut.giving_up.find(qp);
  if (giving_up != cut.giving_up.end()) {
    // The same connection (not a later queue pair at the same address) waits for its loss.
    if (giving_up->second.lock() == tag.connection.lock())
      return PartitionHold{StageHold::UntilReleased(), {}};
    cut.giving_up.erase(giving_up);
  }
  auto timeout_at = now + std::chrono::milliseconds(tag.timeout_ms);
  if (timeout_at > cut.end) return PartitionHold{StageHold::Until(cut.end), {}};
  cut.giving_up.emplace(qp, tag.connection);
  return PartitionHold{StageHold::UntilReleased(), timeout_at};
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
      uint64_t event = ++active.events;
      if (!plan.FiresLocked(active, event, static_cast<uint64_t>(side))) continue;
      bool reject = rule.kind == FaultKind::kReject;
      verdict = reject ? ConnectVerdict::kReject : ConnectVerdict::kUnreachable;
      message = "fault '" + rule.text + "' fired: connection request " + std::to_string(event) +
                (server ? " arriving at this server" : " made by this client") +
                (reject ? " is rejected" : " finds its address unreachable") + " (seed " +
                std::to_string(plan.seed_) + ")";
      break;
    }
  }
  if (!message.empty()) SIM_LOG_NOTICE("%s", message.c_str());
  if (!message.empty() && trace::On())
    trace::Instant(trace::kProcessTrack, "fault", "fault fired",
                   "\"what\":" + trace::Quote(message));
  return verdict;
}

}  // namespace rpma_sim
