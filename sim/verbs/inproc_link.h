// inproc_link.h -- the remote link between two queue pairs of one process: a direct call
// into the responder, which copies straight between the two processes' registered memory
// (one copy, no thread hop) and answers the requester directly.
#ifndef RPMA_SIM_VERBS_INPROC_LINK_H_
#define RPMA_SIM_VERBS_INPROC_LINK_H_

#include <memory>

#include "sim/verbs/remote_link.h"

namespace rpma_sim {

class QueuePair;

class InprocLink : public RemoteLink {
 public:
  // Links `requester` to `responder`; holds neither alive.
  InprocLink(const std::shared_ptr<QueuePair>& requester,
             const std::shared_ptr<QueuePair>& responder);

  void SubmitLocked(const SendRequest& request, uint64_t sequence) override;
  // A write or read that succeeds at the responder is executed there at once, without the
  // delivery's bookkeeping (QueuePair::ExecuteFromPeerLocked).
  DirectExecution ExecuteDirectlyLocked(const SendRequest& request, uint64_t sequence,
                                        Batching batching) override;

 private:
  std::weak_ptr<QueuePair> responder_;
  std::shared_ptr<ResponseSink> reply_;  // answers the requester
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_INPROC_LINK_H_
