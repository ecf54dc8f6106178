// progress_source.h -- something that can move a connection forward on the thread that
// polls a completion queue: what arrived on its socket or in its shared-memory ring is
// read there, and what waits to be sent is sent, instead of waiting for the progress
// engine's thread to be scheduled.
//
// This is how the initiator's own thread does the work (docs/architecture.md): a busy-polling
// application, as RDMA applications are, finds its completion without a thread hop.
#ifndef RPMA_SIM_VERBS_PROGRESS_SOURCE_H_
#define RPMA_SIM_VERBS_PROGRESS_SOURCE_H_

namespace rpma_sim {

class ProgressSource {
 public:
  virtual ~ProgressSource() = default;
  // Handles what arrived and sends what waits, as far as it can without waiting; never
  // blocks. Called with no simulator lock held.
  virtual void Progress() = 0;
  // The completion queue was armed: the application may now sleep on its fd until a
  // completion comes, so nothing it posted may wait for its next poll. Never blocks; called
  // with no simulator lock held.
  virtual void OnArmed() {}
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_PROGRESS_SOURCE_H_
