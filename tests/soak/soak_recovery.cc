// soak_recovery.cc -- what happens to the soak's connection at its quiescent points and when
// it fails: fault rules put in force with the operation they must hit predicted, the failure
// they cause checked against that prediction (which completions, which events, what executed
// at the target), power failures checked against the persistence model, the target's own
// persists, and reconnects.
#include <string.h>

#include "tests/soak/soak_driver.h"

namespace soak {
namespace {

struct NamedStatus {
  ibv_wc_status status;
  const char* name;
};

// The responder answers with these: nothing placed, both queue pairs in error.
const NamedStatus kRemoteStatuses[] = {{IBV_WC_REM_ACCESS_ERR, "IBV_WC_REM_ACCESS_ERR"},
                                       {IBV_WC_REM_OP_ERR, "IBV_WC_REM_OP_ERR"},
                                       {IBV_WC_REM_INV_REQ_ERR, "IBV_WC_REM_INV_REQ_ERR"}};
// The requester's own errors: the request never left it, so nothing was placed.
const NamedStatus kLocalStatuses[] = {{IBV_WC_LOC_PROT_ERR, "IBV_WC_LOC_PROT_ERR"},
                                      {IBV_WC_LOC_LEN_ERR, "IBV_WC_LOC_LEN_ERR"},
                                      {IBV_WC_LOC_QP_OP_ERR, "IBV_WC_LOC_QP_OP_ERR"},
                                      {IBV_WC_LOC_ACCESS_ERR, "IBV_WC_LOC_ACCESS_ERR"}};
// The request may have executed before the requester gave up on it.
const NamedStatus kMaybeStatuses[] = {{IBV_WC_RETRY_EXC_ERR, "IBV_WC_RETRY_EXC_ERR"},
                                      {IBV_WC_RNR_RETRY_EXC_ERR, "IBV_WC_RNR_RETRY_EXC_ERR"},
                                      {IBV_WC_RESP_TIMEOUT_ERR, "IBV_WC_RESP_TIMEOUT_ERR"},
                                      {IBV_WC_BAD_RESP_ERR, "IBV_WC_BAD_RESP_ERR"},
                                      {IBV_WC_FATAL_ERR, "IBV_WC_FATAL_ERR"},
                                      {IBV_WC_GENERAL_ERR, "IBV_WC_GENERAL_ERR"}};

// The values of a rule's op= and the kinds each matches.
struct OpName {
  const char* name;
  unsigned mask;
  bool one_sided;
};
const OpName kOpNames[] = {
    {"write", 1u << kWrite | 1u << kWriteWithImm, true},
    {"read", 1u << kRead, true},
    {"flush", 1u << kFlushPersistent | 1u << kFlushVisibility, true},
    {"atomic_write", 1u << kAtomicWrite, true},
    {"send", 1u << kSend | 1u << kSendWithImm, false},
};

bool IsPlacement(Kind kind) {
  return kind == kWrite || kind == kWriteWithImm || kind == kAtomicWrite;
}
bool IsMessage(Kind kind) { return kind == kSend || kind == kSendWithImm || kind == kWriteWithImm; }

}  // namespace

void SoakDriver::RunEvent() {
  if (prediction_.effect != Prediction::kNone) {
    // A rule that has not fired yet counts this connection's requests: leave it be.
    Checkpoint();
    return;
  }
  if (delay_rule_) {
    Check(rpma_sim_fault_clear(), "rpma_sim_fault_clear");
    delay_rule_ = false;
  }
  Checkpoint();
  uint64_t u = rng_() % 100;
  if (u < 15) {
    rpma_sim_loss mode = static_cast<rpma_sim_loss>(rng_() % 4);
    if (options_.power_failures) PowerFailure(mode);
  } else if (u < 45) {
    if (options_.faults) AddFaultRule();
  } else if (u < 50) {
    Reconnect(true);
  } else if (u < 60) {
    Persist();
  } else if (u < 65) {
    // The client's CPU writes new bytes into its source: nothing is outstanding.
    size_t len = 1 + rng_() % 4096;
    size_t offset = rng_() % (SoakFabric::kSourceSize - len + 1);
    for (size_t i = 0; i < len; ++i)
      fabric_.source.bytes[offset + i] = static_cast<uint8_t>(rng_());
  }
}

void SoakDriver::AddFaultRule() {
  Check(rpma_sim_fault_clear(), "rpma_sim_fault_clear");
  uint64_t u = rng_() % 100;
  const OpName& op = kOpNames[rng_() % (u < 12 ? 4 : 5)];  // a bad key: one-sided ops only
  const uint64_t nth = 1 + rng_() % 12;
  const NamedStatus* status = nullptr;
  Prediction prediction;
  if (u < 35) {
    status = &kRemoteStatuses[u < 12 ? 0 : 1 + rng_() % 2];
    prediction.effect = Prediction::kRemote;
  } else if (u < 50) {
    status = &kLocalStatuses[rng_() % 4];
    prediction.effect = Prediction::kLocal;
  } else if (u < 65) {
    status = &kMaybeStatuses[rng_() % 6];
    prediction.effect = Prediction::kMaybeExecuted;
  } else if (u < 80) {
    prediction.effect = Prediction::kLose;
  }
  char rule[200];
  if (status != nullptr) {
    snprintf(rule, sizeof(rule), "wc:op=%s,status=%s,nth=%llu,side=client,times=1", op.name,
             status->name, (unsigned long long)nth);
    prediction.status = status->status;
  } else if (prediction.effect == Prediction::kLose) {
    snprintf(rule, sizeof(rule), "lose:op=%s,nth=%llu,side=client,times=1", op.name,
             (unsigned long long)nth);
  } else {
    snprintf(rule, sizeof(rule), "delay:op=*,us=10-300,every=%llu,side=client",
             (unsigned long long)(1 + nth));
    delay_rule_ = true;
  }
  prediction.op_mask = op.mask;
  prediction.nth = nth;
  prediction.rule = rule;
  Check(rpma_sim_fault_add(rule), rule);
  ++stats_.rules_added;
  if (prediction.effect != Prediction::kNone) prediction_ = prediction;
}

void SoakDriver::NotePosted(const Op& op) {
  if (prediction_.effect == Prediction::kNone || prediction_.op_index != 0) return;
  if ((prediction_.op_mask & (1u << op.kind)) && ++prediction_.matched == prediction_.nth)
    prediction_.op_index = op.index;
}

void SoakDriver::HandleFailure() {
  failing_ = true;
  // Every outstanding request completes: the failed one with its status, later ones flushed.
  PumpUntil(
      [&] {
        for (const Op& op : outstanding_)
          if (op.state == Op::kPending) return false;
        return true;
      },
      "the failed connection's completions", false);
  // The connection's end, as each cause must produce it.
  const bool lost = prediction_.effect == Prediction::kLose;
  if (!lost) Check(rpma_conn_disconnect(fabric_.client()), "rpma_conn_disconnect (client)");
  const rpma_conn_event expected = lost ? RPMA_CONN_LOST : RPMA_CONN_CLOSED;
  for (rpma_conn* conn : {fabric_.client(), fabric_.server()}) {
    rpma_conn_event event = fabric_.NextEvent(conn);
    if (event != expected)
      Fatal("after '%s' fired: %s on the %s, expected %s", prediction_.rule.c_str(),
            rpma_utils_conn_event_2str(event), conn == fabric_.client() ? "client" : "server",
            rpma_utils_conn_event_2str(expected));
  }
  Check(rpma_conn_disconnect(fabric_.server()), "rpma_conn_disconnect (server)");
  DrainServerReceives();
  ResolveExecutedPrefix();
  fabric_.DeleteConnections();
  Check(rpma_sim_fault_clear(), "rpma_sim_fault_clear");
  prediction_ = Prediction();
  delay_rule_ = false;
  Reconnect(false);
  Checkpoint();
}

void SoakDriver::ResolveExecutedPrefix() {
  std::deque<Op>& window = outstanding_;  // every one completed with an error
  const size_t n = window.size();
  if (prediction_.effect == Prediction::kNone || prediction_.op_index == 0)
    Fatal("a failure no rule caused: operation %llu completed with %s",
          (unsigned long long)(n ? window.front().index : 0),
          n ? ibv_wc_status_str(static_cast<ibv_wc_status>(window.front().status)) : "nothing");
  // How many of the window's requests executed at the target: lo..hi, by what the rule does.
  size_t lo = 0, hi = 0;
  const Op* first = n ? &window.front() : nullptr;
  if (prediction_.effect == Prediction::kLose) {
    // Lost at the submission of the predicted request: it and what follows never left;
    // what was outstanding before it may or may not have executed.
    while (hi < n && window[hi].index != prediction_.op_index) ++hi;
    if (hi == n)
      Fatal(
          "'%s' should have lost the connection at operation %llu, which did not "
          "fail",
          prediction_.rule.c_str(), (unsigned long long)prediction_.op_index);
    if (first->status != IBV_WC_WR_FLUSH_ERR)
      Fatal("'%s': operation %llu completed with %s, expected IBV_WC_WR_FLUSH_ERR",
            prediction_.rule.c_str(), (unsigned long long)first->index,
            ibv_wc_status_str(static_cast<ibv_wc_status>(first->status)));
  } else {
    if (first == nullptr || first->index != prediction_.op_index ||
        first->status != prediction_.status)
      Fatal(
          "'%s' should have failed operation %llu with that status; the first failure was "
          "operation %llu with %s",
          prediction_.rule.c_str(), (unsigned long long)prediction_.op_index,
          (unsigned long long)(first ? first->index : 0),
          first ? ibv_wc_status_str(static_cast<ibv_wc_status>(first->status)) : "none");
    ++stats_.kinds[first->kind].failed;
    ++stats_.failures_predicted;
    if (prediction_.effect == Prediction::kMaybeExecuted) hi = n;
  }
  if (prediction_.effect == Prediction::kLose) ++stats_.failures_predicted;
  for (size_t i = (prediction_.effect == Prediction::kLose ? 0 : 1); i < n; ++i)
    ++stats_.kinds[window[i].kind].flushed;
  if (hi > lo) ++stats_.uncertain_windows;
  // The server received exactly the messages of the requests that executed, in order.
  size_t arrived = 0;
  for (const Op& op : window) arrived += op.arrived;
  // From every request executed down, undo one request at a time: the memory must equal the
  // model after j of them, for some j in [lo, hi] with exactly `arrived` messages among them.
  size_t messages_before = 0;
  for (size_t i = 0; i < n; ++i) messages_before += IsMessage(window[i].kind);
  size_t j = n;
  for (;; --j) {
    if (j >= lo && j <= hi && messages_before == arrived) {
      bool equal = true;
      for (int r = 0; r < 2 && equal; ++r) equal = Shadow(r).CheckCurrent().empty();
      if (equal) break;
    }
    if (j == lo) {
      Mismatch mismatch = Shadow(0).CheckCurrent();
      if (mismatch.empty()) mismatch = Shadow(1).CheckCurrent();
      Fatal(
          "after '%s' fired at operation %llu: the target memory matches no prefix of the "
          "%zu outstanding requests with %zu of their messages received (between %zu and %zu "
          "executed); with %zu executed: %s",
          prediction_.rule.c_str(), (unsigned long long)prediction_.op_index, n, arrived, lo, hi,
          lo, mismatch.empty() ? "(the messages do not match)" : mismatch.what.c_str());
    }
    const Op& undone = window[j - 1];
    if (IsPlacement(undone.kind)) Shadow(undone.region).Undo(undone.offset, undone.before);
    messages_before -= IsMessage(undone.kind);
  }
  // What the executed persistent flushes made durable: certain when the prefix is; when it
  // is not (and a flush is among the uncertain requests), the target's CPU persists it all.
  bool flush_uncertain = false;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = window[i];
    if (op.kind != kFlushPersistent) continue;
    if (lo == hi && i < j) Shadow(op.region).MakeDurable(op.offset, op.snapshot.data(), op.len);
    if (lo != hi && i < hi) flush_uncertain = true;
  }
  if (flush_uncertain) {
    for (int r = 0; r < 2; ++r) {
      Check(rpma_sim_persist(Target(r).bytes, Target(r).size), "rpma_sim_persist");
      Shadow(r).AllDurable();
    }
    ++stats_.persists;
  }
  // The messages that did not arrive never will.
  for (const Message& message : messages_) {
    bool in_window = false;
    for (const Op& op : window) in_window |= op.index == message.op_index && !op.arrived;
    if (!in_window)
      Fatal("the message of operation %llu never arrived", (unsigned long long)message.op_index);
  }
  messages_.clear();
  outstanding_.clear();
}

void SoakDriver::DrainServerReceives() {
  PumpUntil([&] { return receives_.empty(); }, "the server's receives to be flushed", false);
}

void SoakDriver::PowerFailure(rpma_sim_loss mode) {
  Check(rpma_sim_power_failure(fabric_.server_peer(), mode), "rpma_sim_power_failure");
  failing_ = true;
  for (rpma_conn* conn : {fabric_.client(), fabric_.server()}) {
    rpma_conn_event event = fabric_.NextEvent(conn);
    if (event != RPMA_CONN_LOST)
      Fatal("after a power failure: %s on the %s, expected RPMA_CONN_LOST",
            rpma_utils_conn_event_2str(event), conn == fabric_.client() ? "client" : "server");
  }
  DrainServerReceives();
  for (const auto& shadow : shadows_) {
    size_t reverted = 0;
    Mismatch mismatch = shadow->CheckPowerFailure(mode, &reverted);
    if (!mismatch.empty()) Fatal("power failure (loss mode %d): %s", mode, mismatch.what.c_str());
    stats_.units_reverted += reverted;
    stats_.bytes_verified += shadow->size();
  }
  ++stats_.power_failures[mode];
  fabric_.DeleteConnections();
  Reconnect(false);
}

void SoakDriver::Persist() {
  const int r = static_cast<int>(rng_() % 3);
  ShadowRegion& shadow = *shadows_[r];
  const size_t len = 1 + rng_() % shadow.size();
  const size_t offset = rng_() % (shadow.size() - len + 1);
  const uint8_t* bytes = r == 2 ? fabric_.recv.bytes : Target(r).bytes;
  Check(rpma_sim_persist(bytes + offset, len), "rpma_sim_persist");
  shadow.MakeDurable(offset, shadow.current() + offset, len);
  ++stats_.persists;
}

void SoakDriver::Reconnect(bool disconnect_first) {
  if (disconnect_first) {
    failing_ = true;
    Check(rpma_conn_disconnect(fabric_.client()), "rpma_conn_disconnect");
    for (rpma_conn* conn : {fabric_.client(), fabric_.server()}) {
      rpma_conn_event event = fabric_.NextEvent(conn);
      if (event != RPMA_CONN_CLOSED)
        Fatal("disconnecting: %s, expected RPMA_CONN_CLOSED", rpma_utils_conn_event_2str(event));
    }
    DrainServerReceives();
    fabric_.DeleteConnections();
  }
  if (fabric_.client() != nullptr || !outstanding_.empty() || !receives_.empty())
    Fatal("reconnecting with a connection or requests left over");
  sizes_.sq = 1 + static_cast<uint32_t>(sizes_rng_() % 24);
  sizes_.rq = 1 + static_cast<uint32_t>(sizes_rng_() % 16);
  fabric_.Connect(sizes_);
  unsignalled_run_ = 0;
  failing_ = false;
  if (stats_.checkpoints > 0) ++stats_.reconnects;
}

}  // namespace soak
