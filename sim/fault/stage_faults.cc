// stage_faults.cc -- the fault plan's gate in the stage seam: which rule applies to a work
// request at a stage of its pipeline, and what each kind of rule does to it.
#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>

#include "sim/common/log.h"
#include "sim/common/seeded_draw.h"
#include "sim/common/trace.h"
#include "sim/fabric/io_service.h"
#include "sim/fault/fault_gates.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {
namespace {

// Where a work request's rule applies: a bad key (so the responder refuses it, as hardware
// does), a remote error the responder answers with and the requester's own errors (the
// request never leaves) at submission; retries exceeded and the other statuses and delays at
// completion (the request was carried, and may have executed); losses at submission.
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

// The queue pair of `at`, kept alive (or not) by what runs after the lock.
std::shared_ptr<QueuePair> QueuePairOf(const StagePoint& point) {
  return std::const_pointer_cast<QueuePair>(point.qp->shared_from_this());
}

}  // namespace

FaultGates::StageContext FaultGates::ContextOf(const StagePoint& point) {
  point.qp->execution().AssertHeld();  // the stage seam runs under it (stage_gate.h)
  const ConnectionTag& tag = point.qp->tag_locked();
  const int side = tag.side == ConnectionSide::kServer ? 1 : 0;
  const auto now = std::chrono::steady_clock::now();
  return StageContext{
      point,
      tag,
      side,
      (static_cast<uint64_t>(side) << 63) | tag.ordinal,
      std::chrono::duration_cast<std::chrono::milliseconds>(now - tag.established).count(),
      now,
      Undirected(tag.link)};
}

std::shared_ptr<StageHold> FaultGates::Check(const StagePoint& point) {
  FaultPlan& plan = FaultPlan::Get();
  const StageContext at = ContextOf(point);
  Firing firing;
  std::string message;
  {
    MutexLock lock(&plan.mutex_);
    firing = HoldAtCutLinkLocked(plan, at);
    if (!firing.hold) firing = FireFirstRuleLocked(plan, at, &message);
  }
  if (!message.empty()) Announce(message, point.qp->qp_num());
  if (firing.after) firing.after();
  return firing.hold;
}

FaultGates::Firing FaultGates::HoldAtCutLinkLocked(FaultPlan& plan, const StageContext& at) {
  auto partition = plan.partitions_.find(at.link);
  if (partition == plan.partitions_.end()) return Firing{};
  if (at.now >= partition->second.end) {
    plan.partitions_.erase(partition);  // the cut is over
    return Firing{};
  }
  // Only delayed: once the link is whole the request is asked of the rules as any other.
  FaultPlan::PartitionHold cut = plan.HoldAtPartitionLocked(partition->second, at.point.qp, at.tag,
                                                            at.now, StageHold::Then::kAskAgain);
  return Firing{cut.hold, "", GiveUpAt(at, cut.give_up_at)};
}

bool FaultGates::Selects(const FaultRule& rule, const StageContext& at) {
  return AppliesAt(rule, at.point.stage) && rule.Matches(*at.point.request) &&
         (rule.side < 0 || rule.side == at.side) &&
         (rule.conn == 0 || rule.conn == at.tag.ordinal) &&
         (rule.at_ms < 0 || at.since_ms >= rule.at_ms) &&
         (rule.point == 0 || (!rule.at_persist && AtCrashPoint(at.point, rule.point)));
}

FaultGates::Firing FaultGates::FireFirstRuleLocked(FaultPlan& plan, const StageContext& at,
                                                   std::string* message) {
  Firing firing;
  bool fired = false;
  // Every rule that selects the request counts it; the first of them that fires decides.
  for (size_t index = 0; index < plan.rules_.size(); ++index) {
    FaultPlan::Active& active = plan.rules_[index];
    const FaultRule& rule = active.rule;
    if (!Selects(rule, at)) continue;
    uint64_t event = ++plan.ConnectionEventsLocked(index, at.side, at.tag);
    if (fired || !plan.FiresLocked(active, event, at.stream)) continue;
    fired = true;
    switch (rule.kind) {
      case FaultKind::kWc:
        firing = FireWc(rule, at);
        break;
      case FaultKind::kDelay:
        firing = FireDelayLocked(plan, rule, index, event, at);
        break;
      case FaultKind::kLose:
        firing = FireLose(at);
        break;
      case FaultKind::kPartition:
        firing = FirePartitionLocked(plan, rule, at);
        break;
      case FaultKind::kPowerFailure:
        firing = FirePowerFailureLocked(plan, rule, at);
        break;
      case FaultKind::kCall:
      case FaultKind::kReject:
      case FaultKind::kUnreachable:
        break;  // not rules of work requests (AppliesAt)
    }
    *message = "fault '" + rule.text + "' fired: " + OpName(at.point.request->opcode) + " " +
               std::to_string(event) + " of " + (at.side ? "server" : "client") + " connection " +
               std::to_string(at.tag.ordinal) + " " + firing.what + " (seed " +
               std::to_string(plan.seed_) + ")";
  }
  return firing;  // one rule at most fires per stage
}

FaultGates::Firing FaultGates::FireWc(const FaultRule& rule, const StageContext& at) {
  *at.point.fail = rule.status;
  return Firing{nullptr,
                std::string(rule.recv ? "fails its receive with " : "completes with ") +
                    InjectableStatusName(rule.status),
                nullptr};
}

FaultGates::Firing FaultGates::FireDelayLocked(FaultPlan& plan, const FaultRule& rule, size_t index,
                                               uint64_t event, const StageContext& at) {
  const uint64_t span = rule.us_max - rule.us_min + 1;
  const uint64_t us = rule.us_min + Draw(plan.seed_, ~index, at.stream, event) % span;
  return Firing{StageHold::For(std::chrono::microseconds(us)),
                "completes " + std::to_string(us) + " us late", nullptr};
}

FaultGates::Firing FaultGates::FireLose(const StageContext& at) {
  std::shared_ptr<NodeMember> lost = at.tag.connection.lock();
  std::function<void()> lose;
  if (lost) {
    lose = [lost] {
      EnsureProgressEngine();
      boost::asio::post(IoContext(), [lost] { lost->OnNodeFailed(); });
    };
  }
  // Never released: the loss flushes it.
  return Firing{StageHold::UntilReleased(), "loses its connection", lose};
}

FaultGates::Firing FaultGates::FirePartitionLocked(FaultPlan& plan, const FaultRule& rule,
                                                   const StageContext& at) {
  // Every connection between the two nodes waits; shorter than a connection's timeout that
  // only delays, as long or longer its requester gives up at the timeout, as hardware does
  // after its retries.
  FaultPlan::Partition& partition = plan.partitions_[at.link];
  partition.end = std::max(partition.end, at.now + std::chrono::milliseconds(rule.ms));
  FaultPlan::PartitionHold cut =
      plan.HoldAtPartitionLocked(partition, at.point.qp, at.tag, at.now, StageHold::Then::kGoOn);
  const bool ends = rule.ms >= static_cast<uint64_t>(at.tag.timeout_ms);
  return Firing{cut.hold,
                "cuts the link between its two nodes for " + std::to_string(rule.ms) + " ms" +
                    (ends ? " (the connection's timeout is " + std::to_string(at.tag.timeout_ms) +
                                " ms: retries exceeded, then lost)"
                          : ""),
                GiveUpAt(at, cut.give_up_at)};
}

FaultGates::Firing FaultGates::FirePowerFailureLocked(FaultPlan& plan, const FaultRule& rule,
                                                      const StageContext& at) {
  // The node's connections are lost and its memory reverted on the progress engine, away
  // from the locks held here. The queue pair is kept alive for it: its node must fail even
  // if it is destroyed now.
  std::shared_ptr<QueuePair> target = QueuePairOf(at.point);
  const LossMode loss = rule.loss;
  const int exit_status = rule.exit_status;
  const uint64_t seed = plan.seed_;
  const bool keep = rule.keep;
  const TornKeep kept{rule.keep_region, rule.keep_offset};
  auto fail = [target, loss, exit_status, seed, keep, kept] {
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
  };
  // Never released: the failure flushes it before it lands.
  return Firing{
      StageHold::UntilReleased(),
      std::string("cuts this node's power before it lands (loss=") + LossModeName(rule.loss) + ")" +
          (rule.exit_status != 0
               ? ", then the process exits with status " + std::to_string(rule.exit_status)
               : ""),
      fail};
}

std::function<void()> FaultGates::GiveUpAt(const StageContext& at,
                                           std::chrono::steady_clock::time_point when) {
  if (when == std::chrono::steady_clock::time_point()) return nullptr;
  // Retries exceeded: the first outstanding request fails so, the rest are flushed, and
  // the connection is lost on both sides.
  std::weak_ptr<QueuePair> qp = QueuePairOf(at.point);
  std::weak_ptr<NodeMember> connection = at.tag.connection;
  return [when, qp, connection] {
    RunAt(when, [qp, connection] {
      if (std::shared_ptr<QueuePair> cut = qp.lock()) cut->EnterError(IBV_WC_RETRY_EXC_ERR);
      if (std::shared_ptr<NodeMember> member = connection.lock()) member->OnNodeFailed();
    });
  };
}

uint64_t& FaultPlan::ConnectionEventsLocked(size_t rule, int side, const ConnectionTag& tag) {
  if (per_connection_.size() >= sweep_counts_at_) {
    for (auto it = per_connection_.begin(); it != per_connection_.end();) {
      // Ordinal 0 (no connection) has nothing to end.
      const bool ended = std::get<2>(it->first) != 0 && it->second.connection.expired();
      it = ended ? per_connection_.erase(it) : std::next(it);
    }
    sweep_counts_at_ = std::max<size_t>(1024, 2 * per_connection_.size());
  }
  ConnectionCount& count = per_connection_[ConnectionKey(rule, side, tag.ordinal)];
  if (count.events == 0) count.connection = tag.connection;
  return count.events;
}

FaultPlan::PartitionHold FaultPlan::HoldAtPartitionLocked(Partition& cut, const QueuePair* qp,
                                                          const ConnectionTag& tag,
                                                          std::chrono::steady_clock::time_point now,
                                                          StageHold::Then then) {
  auto giving_up = cut.giving_up.find(qp);
  if (giving_up != cut.giving_up.end()) {
    // The same connection (not a later queue pair at the same address) waits for its loss.
    if (giving_up->second.lock() == tag.connection.lock())
      return PartitionHold{StageHold::UntilReleased(), {}};
    cut.giving_up.erase(giving_up);
  }
  auto timeout_at = now + std::chrono::milliseconds(tag.timeout_ms);
  if (timeout_at > cut.end) {
    std::shared_ptr<StageHold> hold = StageHold::Until(cut.end, then);
    // Bounded by the queue pairs at the cut: the holds already released go.
    cut.waiting.erase(std::remove_if(cut.waiting.begin(), cut.waiting.end(),
                                     [](const std::weak_ptr<StageHold>& waiting) {
                                       std::shared_ptr<StageHold> held = waiting.lock();
                                       return !held || held->released();
                                     }),
                      cut.waiting.end());
    cut.waiting.push_back(hold);
    return PartitionHold{hold, {}};
  }
  cut.giving_up.emplace(qp, tag.connection);
  return PartitionHold{StageHold::UntilReleased(), timeout_at};
}

}  // namespace rpma_sim
