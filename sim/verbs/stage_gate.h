// stage_gate.h -- the seam through which a work request's stages can be held back.
//
// Every work request passes three stages of its queue pair's pipeline: kSubmit (posted, about
// to be carried to the responder), kExecute (arrived at the responder, about to touch its
// memory) and kComplete (its outcome is back, about to become a completion). Before each, the
// queue pair asks the process's StageGate, if one is installed, whether to go on. The gate
// may answer with a StageHold: the request waits at that stage until the hold is released (at
// a time, or by whoever holds it), and so does every later request of that queue pair at the
// same stage, so RC order holds. Requests held anywhere are still outstanding: an error or a
// lost connection flushes them, in order, like any other. Fault injection (delays,
// partitions) installs a gate; with none installed a stage costs one atomic load.
#ifndef RPMA_SIM_VERBS_STAGE_GATE_H_
#define RPMA_SIM_VERBS_STAGE_GATE_H_

#include <stdint.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include <infiniband/verbs.h>

#include "sim/common/gate_slot.h"
#include "sim/common/mutex.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

class QueuePair;

enum class Stage {
  kSubmit,    // requester: posted, not yet carried to the responder
  kExecute,   // responder: arrived, not yet executed against its memory
  kComplete,  // requester: the outcome is back, not yet a completion
};

// Where a request is: the queue pair whose pipeline it is in (the requester's for kSubmit
// and kComplete, the responder's for kExecute) and the request itself.
struct StagePoint {
  Stage stage;
  const QueuePair* qp;
  const SendRequest* request;
  uint64_t sequence;  // the requester's send-queue sequence
  // The gate may set it to make the request fail (fault injection) as a hardware error of
  // that status does. At kSubmit remote errors and the requester's own: IBV_WC_REM_ACCESS_ERR
  // travels as a key no region has, so the responder refuses it; IBV_WC_REM_OP_ERR and
  // IBV_WC_REM_INV_REQ_ERR travel with the request (SendRequest::responder_fails) and the
  // responder answers with them; either way both queue pairs go to error. A local error
  // (IsLocalRequesterStatus) keeps the request from leaving: it completes with the status
  // once those before it have, and only the requester goes to error. At
  // kExecute any remote status: the responder answers with it without touching memory, and
  // both go to error (remote errors); for a request that consumes a receive, a receiver's
  // status (IsReceiverStatus) instead completes that receive with it, the requester gets the
  // matching remote error, and both go to error. At kComplete any status: the requester completes
  // the request with it and goes to error alone (local errors, retries exceeded).
  ibv_wc_status* fail;
};

// The statuses a receive can complete with when the send that consumes it fails at the
// receiver: IBV_WC_LOC_LEN_ERR (the requester gets IBV_WC_REM_INV_REQ_ERR),
// IBV_WC_LOC_PROT_ERR, IBV_WC_LOC_QP_OP_ERR, IBV_WC_GENERAL_ERR (IBV_WC_REM_OP_ERR).
inline bool IsReceiverStatus(ibv_wc_status status) {
  return status == IBV_WC_LOC_LEN_ERR || status == IBV_WC_LOC_PROT_ERR ||
         status == IBV_WC_LOC_QP_OP_ERR || status == IBV_WC_GENERAL_ERR;
}

// Keeps a stage shut until Release() (or, for a hold made by Until, its time).
class StageHold : public std::enable_shared_from_this<StageHold> {
 public:
  // What the request that waited does once the hold is released: go on (the hold was the
  // gate's verdict on it), or ask the gate again as if it had just come (the hold only
  // delayed it: a cut link, which decides nothing about the request itself).
  enum class Then { kGoOn, kAskAgain };

  // A hold released by whoever made it.
  static std::shared_ptr<StageHold> UntilReleased();
  // A hold the progress engine releases at `deadline` (or earlier, by Release()).
  static std::shared_ptr<StageHold> Until(std::chrono::steady_clock::time_point deadline,
                                          Then then = Then::kGoOn);
  static std::shared_ptr<StageHold> For(std::chrono::microseconds duration) {
    return Until(std::chrono::steady_clock::now() + duration);
  }

  StageHold(const StageHold&) = delete;
  StageHold& operator=(const StageHold&) = delete;

  // Opens the stage: every waiter is resumed on the progress engine (never on the calling
  // thread, which may hold any lock). Idempotent.
  void Release();
  bool released() const { return released_.load(std::memory_order_acquire); }
  Then then() const { return then_; }

  // Runs `resume` on the progress engine once the hold is released (soon, if it already
  // is). A queue pair calls it with its execution lock held; `resume` takes it again.
  void OnRelease(std::function<void()> resume);

 private:
  explicit StageHold(Then then) : then_(then) {}

  const Then then_;
  std::atomic<bool> released_{false};
  Mutex mutex_;
  std::vector<std::function<void()>> waiters_ GUARDED_BY(mutex_);
};

class StageGate {
 public:
  virtual ~StageGate() = default;

  // Null to let the request through, or the hold it must wait for. Called with the queue
  // pair's execution lock held: it must not block or call back into the queue pair.
  virtual std::shared_ptr<StageHold> Check(const StagePoint& point) = 0;
};

// The process's gate, or null for none (the default).
extern GateSlot<StageGate> g_stage_gate_slot;
// Installs `gate` (null: none). Peers' direct access to this process (direct_target.h)
// closes while one is installed, so that every request meets it at kExecute.
void SetStageGate(std::shared_ptr<StageGate> gate);

// What the installed gate, if any, says of `point` (callers first ask whether one is:
// g_stage_gate_slot.installed()).
std::shared_ptr<StageHold> CheckStage(const StagePoint& point);

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_STAGE_GATE_H_
