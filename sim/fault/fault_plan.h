// fault_plan.h -- the process's fault-injection rules in force, and the decisions they make.
//
// Rules come from RPMA_SIM_FAULTS (read once, at the first rpma_peer_new) or from code
// (rpma_sim_fault_add). While any rule is in force the plan's gates sit in the seams: the
// call seam (a `call` rule fails a public call at once), the connect seam (`reject`,
// `unreachable`) and the stage seam of every queue pair's pipeline (`wc` fails a work
// request, `delay` holds its completion, `lose` loses its connection, `partition` stops its
// link for a time). Every probabilistic choice comes from the seed (RPMA_SIM_SEED, or a
// random one that is printed): a work request's decision from its rule, its connection (side
// and ordinal) and its ordinal among that connection's matching requests, so threads do not
// change which requests fail. When the first rule comes into force the rules and the seed
// are printed on stderr once; every firing is logged (NOTICE). A fork child has a plan of
// its own, read from the environment again as a new process's is: rules added in code by the
// parent, the counts and the partitions stay the parent's.
#ifndef RPMA_SIM_FAULT_FAULT_PLAN_H_
#define RPMA_SIM_FAULT_FAULT_PLAN_H_

#include <stdint.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/common/per_process.h"
#include "sim/common/status.h"
#include "sim/fabric/node.h"
#include "sim/fault/fault_rule.h"
#include "sim/verbs/connection_tag.h"
#include "sim/verbs/stage_gate.h"

namespace rpma_sim {

class ProtectionDomain;

class FaultPlan {
 public:
  static FaultPlan& Get();

  // Reads RPMA_SIM_FAULTS (`@path`: the rules are in that file, at most 1 MiB) and
  // RPMA_SIM_SEED (decimal, or hexadecimal after 0x) once per process (a fork child reads
  // them again). kInvalid, now and at every later call, if they cannot be understood
  // (logged).
  Status LoadEnvironmentOnce();

  // The rules RPMA_SIM_FAULTS gives, ';'-separated ("" when unset), reading them from the
  // file `@path` names. False, with *error saying why, if that file cannot be read.
  static bool EnvironmentRules(std::string* rules, std::string* error);

  // Adds rules (';'-separated), after the environment's (read now if not yet). kInvalid,
  // with *error saying where and why, if any is not a valid rule; then none is added.
  Status Add(const std::string& rules, std::string* error);
  // Removes every rule, the environment's too (read now if not yet), and ends the cuts of
  // links that partition rules began; the counts of firings stay.
  void Clear();
  // How many times rules fired in this process.
  uint64_t fired();
  // The seed every choice is drawn from: RPMA_SIM_SEED, a random one, or set_seed's.
  uint64_t seed();
  // False if RPMA_SIM_SEED is set to something that is not a number (LoadEnvironmentOnce
  // then fails).
  bool seed_understood() const { return seed_error_.empty(); }
  // Replaces the seed for the choices made from now on: rules added afterwards choose as the
  // same rules added first in a process started with RPMA_SIM_SEED=seed. The next rule added
  // prints it.
  void set_seed(uint64_t seed);

  // How many (rule, side, connection) counts of work requests the plan holds: those of live
  // connections, and at most about a thousand of connections that ended (for tests).
  size_t connection_counts();

  // rpma_sim_persist is about to make bytes of `pd`'s node durable: the node's next crash
  // point. A power_failure rule with that `point=` (and no side or connection selector: no
  // connection makes a persist; `at=persist` says so, and keeps work requests of another
  // node that reach their own point K from firing it) fires now, on the caller's thread: the
  // node's power fails instead, and with `exit=N` the process ends. True if one fired. Not
  // under the region table's lock (the failure waits for copies to end).
  bool PowerFailureBeforePersist(ProtectionDomain* pd);

 private:
  FaultPlan();
  friend class FaultGates;
  friend class PerProcess<FaultPlan>;

  Status LoadEnvironment();
  // Add's work, without reading the environment first (LoadEnvironment's own).
  Status AddRules(const std::string& rules, std::string* error);

  // A rule and what it has done.
  struct Active {
    FaultRule rule;
    uint64_t events = 0;  // call rules: matching calls in the process
    uint64_t fired = 0;
  };
  // Per rule and connection (side, ordinal): how many matching work requests it has seen.
  using ConnectionKey = std::tuple<size_t, int, uint64_t>;

  void InstallLocked() REQUIRES(mutex_);
  // Whether `active`'s `event`th matching event fires (1-based), drawing from the seed with
  // `stream` (what the event belongs to) when the rule has a probability.
  bool FiresLocked(Active& active, uint64_t event, uint64_t stream) REQUIRES(mutex_);

  Mutex mutex_;
  std::vector<Active> rules_ GUARDED_BY(mutex_);
  struct ConnectionCount {
    uint64_t events = 0;
    std::weak_ptr<NodeMember> connection;  // gone: the count can go
  };
  std::map<ConnectionKey, ConnectionCount> per_connection_ GUARDED_BY(mutex_);
  // per_connection_ drops the counts of ended connections when it grows to this size, so it
  // holds the counts of live connections only (amortized: the next sweep at twice the size).
  size_t sweep_counts_at_ GUARDED_BY(mutex_) = 1024;
  // The count of `rule` (its index) for the connection `tag` names, on its side.
  uint64_t& ConnectionEventsLocked(size_t rule, int side, const ConnectionTag& tag)
      REQUIRES(mutex_);
  // A link between two nodes that carries nothing until `end`: every stage of every queue
  // pair of a connection between them waits. A queue pair whose connection's timeout ends
  // first gives up then (its requester's retries are exceeded) and its connection is lost;
  // `giving_up` holds those already on their way, by queue pair and connection.
  struct Partition {
    std::chrono::steady_clock::time_point end;
    std::map<const void*, std::weak_ptr<NodeMember>> giving_up;
    // The holds of the requests that wait for the cut to end (a clear releases them).
    std::vector<std::weak_ptr<StageHold>> waiting;
  };
  // What a queue pair at a cut link does: the hold, and when it gives up (or none). A hold
  // that ends with the cut does `then` (StageHold::Then) with the request.
  struct PartitionHold {
    std::shared_ptr<StageHold> hold;
    std::chrono::steady_clock::time_point give_up_at;
  };
  PartitionHold HoldAtPartitionLocked(Partition& cut, const QueuePair* qp, const ConnectionTag& tag,
                                      std::chrono::steady_clock::time_point now,
                                      StageHold::Then then) REQUIRES(mutex_);
  // Lower node id first.
  std::map<ConnectionTag::Link, Partition> partitions_ GUARDED_BY(mutex_);
  uint64_t seed_ GUARDED_BY(mutex_) = 0;
  bool seed_printed_ GUARDED_BY(mutex_) = false;
  uint64_t fired_ GUARDED_BY(mutex_) = 0;
  std::string seed_error_;  // RPMA_SIM_SEED when it is not a number (set by the constructor)
  std::once_flag environment_loaded_;
  Status environment_status_ = Status::kOk;  // set once, under environment_loaded_
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_FAULT_FAULT_PLAN_H_
