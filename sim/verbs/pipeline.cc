// pipeline.cc -- holding a queue pair's work requests at a stage, and letting them go on.
//
// A queue pair keeps one line per stage (stage_gate.h): at kSubmit the tail of in_flight_
// (`unsubmitted_`), at kExecute inbound_ (shared with RNR waits), at kComplete the head of
// in_flight_ (their outcomes in `answered_`). Only the first request in a line is ever
// held; the rest wait behind it without asking the gate, and each is asked once it is
// first. A request held only to delay it (StageHold::Then::kAskAgain) is asked again. Everything
// here runs under the execution lock; a released hold resumes the queue pair on the progress engine
// (ResumeHeld).
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {

bool QueuePair::PassHeldOrGatedLocked(Stage stage, const SendRequest& request, uint64_t sequence,
                                      ibv_wc_status* fail) {
  std::shared_ptr<StageHold>& hold = holds_[static_cast<int>(stage)];
  if (hold) {
    if (!hold->released()) return false;
    const StageHold::Then then = hold->then();
    hold.reset();
    // The request that waited for the gate's verdict goes on without asking again; one that
    // was only delayed is asked now.
    if (then == StageHold::Then::kGoOn) return true;
  }
  hold = CheckStage(StagePoint{stage, this, &request, sequence, fail});
  if (!hold) return true;
  std::weak_ptr<QueuePair> self = weak_from_this();
  hold->OnRelease([self] {
    if (std::shared_ptr<QueuePair> qp = self.lock()) qp->ResumeHeld();
  });
  return false;
}

void QueuePair::ResumeHeld() {
  ExecutionScope lock(this);
  SubmitHeldLocked();
  ReceivePostedLocked();  // the inbound line: held executions and RNR waits alike
  CompleteHeldLocked();
}

void QueuePair::SubmitHeldLocked() {
  while (unsubmitted_ > 0 && state_ == State::kReadyToSend && !failing_locally_) {
    const InFlight& next = in_flight_[in_flight_.size() - unsubmitted_];
    ibv_wc_status injected = IBV_WC_SUCCESS;
    if (!PassLocked(Stage::kSubmit, next.request, next.sequence, &injected)) return;
    // Copied: an outcome delivered during the call (in process) may complete it.
    SendRequest request = next.request;
    uint64_t sequence = next.sequence;
    --unsubmitted_;
    SubmitLocked(request, sequence, injected);
  }
}

void QueuePair::CompleteHeldLocked() {
  static const uint8_t kNoBytes = 0;
  while (!answered_.empty()) {
    const InFlight& next = in_flight_.front();
    Answer& answer_first = answered_.front();
    if (!PassLocked(Stage::kComplete, next.request, next.sequence, &answer_first.status)) return;
    InFlight done = std::move(in_flight_.front());
    in_flight_.pop_front();
    Answer answer = std::move(answered_.front());
    answered_.erase(answered_.begin());
    const uint8_t* read_data = nullptr;
    if (answer.carried) read_data = answer.read_data.empty() ? &kNoBytes : answer.read_data.data();
    // An error outcome flushes the rest (and empties answered_).
    FinishLocked(done.request, done.sequence, answer.status, read_data, answer.read_data.size());
  }
}

}  // namespace rpma_sim
