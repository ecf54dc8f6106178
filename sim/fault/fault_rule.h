// fault_rule.h -- one fault-injection rule, parsed from its text.
//
// A rule is `kind:key=value,...` (rpma_sim(7), docs/fault-injection.md). Kinds: `call` (a public
// call returns an error), `wc` (a work request completes with an error status), `delay` (a work
// request's completion is late), `lose` (the connection is lost), `reject` (a connection
// request is rejected), `unreachable` (a connection request's address never answers),
// `partition` (the connection's link carries nothing for a time), `power_failure` (the node
// executing a work request loses power before it lands).
// Selectors: nth, after, every, p, times, side for all; conn and at_ms for the kinds that act
// on a connection's work requests; point for power_failure (the target's crash point). A text that
// is not a valid rule is refused with the position (from 1) and the reason.
#ifndef RPMA_SIM_FAULT_FAULT_RULE_H_
#define RPMA_SIM_FAULT_FAULT_RULE_H_

#include <infiniband/verbs.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "sim/common/status.h"
#include "sim/pmem/persistence_domain.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

enum class FaultKind {
  kCall,
  kWc,
  kDelay,
  kLose,
  kReject,
  kUnreachable,
  kPartition,
  kPowerFailure,
};

// Whether rules of `kind` act on connection requests (the connect seam, cm/connect_gate.h).
inline bool IsConnectKind(FaultKind kind) {
  return kind == FaultKind::kReject || kind == FaultKind::kUnreachable;
}

// The longest time a rule may name (a delay's us, a partition's ms, at_ms): a year. A longer
// one is not a time the simulator's clock (64-bit nanoseconds) can add to "now" without
// overflowing, so it is refused when the rule is parsed, with its position and the reason.
constexpr uint64_t kMaxRuleTimeMs = 365ull * 24 * 3600 * 1000;

struct FaultRule {
  FaultKind kind = FaultKind::kCall;
  std::string text;  // as written, for log lines

  // call
  std::string function = "*";
  Status error = Status::kOk;
  std::string error_name;
  // wc, delay, lose, partition: which operations (bit 1 << SendOpcode), all by default
  uint32_t ops = ~0u;
  // wc
  ibv_wc_status status = IBV_WC_SUCCESS;
  // delay: the completion is late by a number of microseconds in [us_min, us_max]
  uint64_t us_min = 0;
  uint64_t us_max = 0;
  // partition: how long the link carries nothing
  uint64_t ms = 0;
  // power_failure: what reverts, and the status to end the process with (0: it goes on);
  // `point`: only just before the target node's Kth crash point (crash_journal.h); `keep`:
  // in a torn mode, every word or line not durable reverts but the one holding byte
  // `keep_offset` of the node's `keep_region`th region (rpma-sim-crash's replay of a state
  // where one unit survived).
  LossMode loss = LossMode::kAll;
  int exit_status = 0;
  uint64_t point = 0;
  bool at_persist = false;  // `at=persist`: the point is an rpma_sim_persist (no work request)
  bool keep = false;
  uint32_t keep_region = 0;
  uint64_t keep_offset = 0;

  // Selectors (0 or -1: not given). Events are counted per connection for work requests and
  // per process for calls and connection requests (on their side).
  uint64_t nth = 0;    // only the Nth matching event
  uint64_t after = 0;  // the Nth matching event and every later one
  uint64_t every = 0;  // every Nth matching event
  double p = 1.0;      // each matching event with this probability (from the seed)
  uint64_t times = 0;  // at most this many firings in the process
  uint64_t conn = 0;   // only on the Nth connection of its side in this process
  int side = -1;       // 0: the client's connections, 1: the server's (connect kinds: client
                       // unless given: where the request is made, or 1: where it arrives)
  int64_t at_ms = -1;  // only from this many ms after the connection was established

  // wc only: the rule fails the receive a send (or a write with immediate data) consumes,
  // at the receiver (op=recv), instead of a request at its requester.
  bool recv = false;

  // Whether the rule selects by what only a connection's work requests have (a side, a
  // connection, a time since it was established, an operation): then no rpma_sim_persist,
  // which has none of them, fires it.
  bool SelectsOnlyWorkRequests() const {
    return side >= 0 || conn != 0 || at_ms >= 0 || ops != ~0u || recv;
  }

  bool MatchesOp(SendOpcode opcode) const { return (ops & (1u << static_cast<int>(opcode))) != 0; }
  // Whether the rule selects `request` (at its requester, or with op=recv at its receiver).
  bool Matches(const SendRequest& request) const {
    return recv ? request.opcode == SendOpcode::kSend || request.with_imm
                : MatchesOp(request.opcode);
  }
};

// The name of a status a `wc` rule can give ("IBV_WC_RETRY_EXC_ERR"), or "?".
const char* InjectableStatusName(ibv_wc_status status);

// Parses one rule; on failure *error says where (1-based position in `text`) and why.
bool ParseFaultRule(const std::string& text, FaultRule* rule, std::string* error);

// Parses `text` as rules separated by ';' (empty ones are skipped). All or nothing.
bool ParseFaultRules(const std::string& text, std::vector<FaultRule>* rules, std::string* error);

}  // namespace rpma_sim

#endif  // RPMA_SIM_FAULT_FAULT_RULE_H_
