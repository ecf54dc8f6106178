// soak_driver.h -- one soak run on one transport: random operations of every kind from a seed,
// posted on the soak's one connection with the send-queue rules respected, every completion
// checked, the target memory and every read and message checked byte for byte against the
// shadow model; at quiescent points (nothing outstanding) a checkpoint, and now and then a
// fault rule, a power failure, a persist or a reconnect. soak_driver.cc posts and completes;
// soak_recovery.cc handles faults, failures and power failures.
//
// The operations and rules come from the seed alone. Thread timing is not seeded, so every
// property checked holds for any interleaving: the model is updated in posting order (the
// order the target executes a queue pair's requests in), memory is compared only when nothing
// is outstanding, and after a failure that leaves it open which outstanding requests executed
// (a lost connection, retries exceeded) the memory must equal the model after some prefix of
// them, consistent with the messages the server received.
#ifndef RPMA_SIM_TESTS_SOAK_SOAK_DRIVER_H_
#define RPMA_SIM_TESTS_SOAK_SOAK_DRIVER_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tests/soak/shadow_memory.h"
#include "tests/soak/soak_fabric.h"
#include "tests/soak/soak_stats.h"

namespace soak {

// One posted work request of the client, and what the model needs to check it.
struct Op {
  uint64_t index = 0;  // the soak's operation index (also its wr_id)
  Kind kind = kWrite;
  bool signalled = false;
  int region = 0;  // 0: target A, 1: target B (one-sided operations)
  size_t offset = 0;
  size_t len = 0;
  size_t src_offset = 0;
  uint32_t imm = 0;
  uint8_t atomic_value[8] = {};
  std::vector<uint8_t> before;    // placements: the model's bytes they replaced
  std::vector<uint8_t> snapshot;  // reads: the bytes expected; persistent flushes: made durable
  size_t read_slot = 0;
  enum State { kPending, kOk, kError } state = kPending;
  int status = 0;        // the completion's status, for kError
  bool arrived = false;  // a message the server received
};

// A message on its way to the server's receive queue, in the order the server must see it.
struct Message {
  uint64_t op_index = 0;
  Kind kind = kSend;
  std::vector<uint8_t> bytes;  // a send's payload (a write with imm: its length only matters)
  size_t len = 0;
  uint32_t imm = 0;
};

// A wc or lose rule in force and the operation it must hit.
struct Prediction {
  enum Effect { kNone, kRemote, kLocal, kMaybeExecuted, kLose } effect = kNone;
  unsigned op_mask = 0;   // the kinds the rule's op= matches (bits of Kind)
  uint64_t nth = 0;       // the nth matching operation posted after the rule was added
  uint64_t matched = 0;   // matching operations posted so far
  uint64_t op_index = 0;  // the operation it hits, once posted (0: not yet)
  int status = 0;         // the status injected (wc)
  std::string rule;
};

struct SoakOptions {
  uint64_t seed = 1;
  uint64_t operations = 10000;
  std::string transport;  // for the messages only: RPMA_SIM_TRANSPORT decides
  bool faults = true;
  bool power_failures = true;
};

class SoakDriver {
 public:
  explicit SoakDriver(const SoakOptions& options);
  SoakDriver(const SoakDriver&) = delete;
  SoakDriver& operator=(const SoakDriver&) = delete;

  // Runs the soak; returns only when every check passed (any mismatch ends the process
  // through Fatal, with the seed, the operation index and the first differing bytes).
  void Run();

  const Stats& stats() const { return stats_; }

 private:
  // soak_driver.cc: operations and completions.
  Op Generate(uint64_t index);
  bool Post(Op* op);  // false: a failure showed itself first (the op was not posted)
  int PostToFabric(Op* op);
  void ApplyToModel(Op* op);
  bool EnsureReceive();
  void PostReceive();
  // Polls both completion queues until done() holds; false if bail_on_failure and a failure
  // showed itself first. Fatal after the safety timeout.
  bool PumpUntil(const std::function<bool()>& done, const char* what, bool bail_on_failure);
  bool PollClient();
  bool PollServer();
  void OnClientCompletion(const ibv_wc& wc);
  void OnServerCompletion(const ibv_wc& wc);
  void CheckSuccess(const Op& op, const ibv_wc& wc);
  void RetireFront();
  bool Quiesce();
  void Checkpoint();
  ShadowRegion& Shadow(int region) { return *shadows_[region]; }
  Region& Target(int region) { return region == 0 ? fabric_.target_a : fabric_.target_b; }

  // soak_recovery.cc: events, faults, failures.
  void RunEvent();
  void AddFaultRule();
  void NotePosted(const Op& op);
  void HandleFailure();
  void DrainAfterFailure();
  void ResolveExecutedPrefix();
  void PowerFailure(rpma_sim_loss mode);
  void Persist();
  void Reconnect(bool disconnect_first);
  void DrainServerReceives();

  const SoakOptions options_;
  std::mt19937_64 rng_;        // operations, events and rules: the seed alone decides
  std::mt19937_64 sizes_rng_;  // queue sizes of each new connection
  SoakFabric fabric_;
  std::vector<std::unique_ptr<ShadowRegion>> shadows_;  // target A, target B, receives
  QueueSizes sizes_;
  Stats stats_;
  uint64_t current_index_ = 0;  // the operation being posted, for failure messages

  std::deque<Op> outstanding_;           // posted, slot not yet freed by a polled completion
  size_t unsignalled_run_ = 0;           // unsignalled operations since the last signalled one
  std::deque<Message> messages_;         // sent, not yet received by the server
  std::map<uint64_t, size_t> receives_;  // posted receives: wr_id -> slot
  std::vector<size_t> free_slots_;
  uint64_t next_recv_id_ = 1;
  // A failure (an error completion, a loss) or a deliberate end of the connection is under
  // way: flushed completions are expected.
  bool failing_ = false;
  uint64_t first_error_index_ = 0;
  Prediction prediction_;
  bool delay_rule_ = false;
};

}  // namespace soak

#endif  // RPMA_SIM_TESTS_SOAK_SOAK_DRIVER_H_
