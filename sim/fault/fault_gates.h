// fault_gates.h -- the fault plan's gates in the three seams: the call seam (`call` rules),
// the connect seam (`reject`, `unreachable`; both in fault_plan.cc) and the stage seam of
// every queue pair (the rules on work requests, one function per kind: stage_faults.cc).
// Private to sim/fault.
#ifndef RPMA_SIM_FAULT_FAULT_GATES_H_
#define RPMA_SIM_FAULT_FAULT_GATES_H_

#include <stdint.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "sim/cm/connect_gate.h"
#include "sim/common/call_seam.h"
#include "sim/fault/fault_plan.h"
#include "sim/verbs/connection_tag.h"
#include "sim/verbs/stage_gate.h"

namespace rpma_sim {

class FaultGates : public CallGate, public StageGate, public ConnectGate {
 public:
  Status Check(const char* function) override;
  std::shared_ptr<StageHold> Check(const StagePoint& point) override;
  ConnectVerdict Check(ConnectionSide side) override;

  // Logs a rule's firing (NOTICE) and marks it in the trace: on the work request's queue
  // pair's track when there is one, else on the process's.
  static void Announce(const std::string& message, std::optional<uint32_t> qp_num);

 private:
  // What the stage's rules look at, taken once before the plan's lock.
  struct StageContext {
    const StagePoint& point;
    const ConnectionTag& tag;
    int side;          // as a rule's `side`: 0 client, 1 server
    uint64_t stream;   // the connection's stream of seeded draws
    int64_t since_ms;  // since the connection was established
    std::chrono::steady_clock::time_point now;
    ConnectionTag::Link link;  // undirected: the same from either node
  };
  static StageContext ContextOf(const StagePoint& point);

  // What a rule that fired (or a cut link) does to the work request: the hold it puts on it,
  // its words for the log, and what runs once the plan's lock is let go (a loss, a power
  // failure, giving up at a cut link: the connection manager's locks come before the
  // execution lock that the stage seam holds).
  struct Firing {
    std::shared_ptr<StageHold> hold;
    std::string what;
    std::function<void()> after;
  };

  // A cut link holds every stage of its connections: no rule is asked.
  static Firing HoldAtCutLinkLocked(FaultPlan& plan, const StageContext& at) REQUIRES(plan.mutex_);
  // The first rule that applies to the work request and fires, and what it does; the
  // message to log in *message.
  static Firing FireFirstRuleLocked(FaultPlan& plan, const StageContext& at, std::string* message)
      REQUIRES(plan.mutex_);
  static bool Selects(const FaultRule& rule, const StageContext& at);

  // One per kind of work-request rule: what `rule`, firing at its `event`th match, does.
  static Firing FireWc(const FaultRule& rule, const StageContext& at);
  static Firing FireDelayLocked(FaultPlan& plan, const FaultRule& rule, size_t index,
                                uint64_t event, const StageContext& at) REQUIRES(plan.mutex_);
  static Firing FireLose(const StageContext& at);
  static Firing FirePartitionLocked(FaultPlan& plan, const FaultRule& rule, const StageContext& at)
      REQUIRES(plan.mutex_);
  static Firing FirePowerFailureLocked(FaultPlan& plan, const FaultRule& rule,
                                       const StageContext& at) REQUIRES(plan.mutex_);

  // At `when` (none: nothing to do), the queue pair's requester gives up: its retries are
  // exceeded and its connection is lost on both sides.
  static std::function<void()> GiveUpAt(const StageContext& at,
                                        std::chrono::steady_clock::time_point when);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_FAULT_FAULT_GATES_H_
