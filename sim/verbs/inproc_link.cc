// inproc_link.cc -- submitting to a responder queue pair of the same process.
#include "sim/verbs/inproc_link.h"

#include "sim/verbs/one_sided.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {
namespace {

// Hands the outcome back to the requesting queue pair, if it still exists.
class RequesterSink : public ResponseSink {
 public:
  explicit RequesterSink(std::weak_ptr<QueuePair> requester) : requester_(std::move(requester)) {}

  void RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                     size_t length) override {
    if (auto requester = requester_.lock()) {
      // In process, the responder's execution lock covers its requester's (ConnectInProcess).
      requester->execution().AssertHeld();
      requester->OnResponseLocked(sequence, outcome, read_data, length);
    }
  }

 private:
  std::weak_ptr<QueuePair> requester_;
};

}  // namespace

InprocLink::InprocLink(const std::shared_ptr<QueuePair>& requester,
                       const std::shared_ptr<QueuePair>& responder)
    : responder_(responder), reply_(std::make_shared<RequesterSink>(requester)) {}

DirectExecution InprocLink::ExecuteDirectlyLocked(const SendRequest& request, uint64_t sequence,
                                                  Batching batching) {
  std::shared_ptr<QueuePair> responder = responder_.lock();
  if (!responder) return DirectExecution::kSubmit;
  // The requester's execution lock covers its in-process responder's (ConnectInProcess).
  responder->execution().AssertHeld();
  return responder->ExecuteFromPeerLocked(request, sequence) ? DirectExecution::kExecuted
                                                             : DirectExecution::kSubmit;
}

void InprocLink::SubmitLocked(const SendRequest& request, uint64_t sequence) {
  std::shared_ptr<QueuePair> responder = responder_.lock();
  if (!responder) {
    reply_->RespondLocked(sequence, Outcome{IBV_WC_RETRY_EXC_ERR}, nullptr, 0);
    return;
  }
  InboundRequest inbound;
  inbound.request = request;
  inbound.sequence = sequence;
  inbound.reply = reply_;
  if (request.local)
    inbound.initiator = std::make_unique<LocalBuffer>(request.local, request.local_offset);
  // Never refused in practice (the requester's send queue holds at most as many); if it
  // were, the requester hears what an unanswered request ends with. The requester's
  // execution lock covers its in-process responder's (ConnectInProcess).
  responder->execution().AssertHeld();
  if (!responder->DeliverLocked(std::move(inbound)))
    reply_->RespondLocked(sequence, Outcome{IBV_WC_RETRY_EXC_ERR}, nullptr, 0);
}

}  // namespace rpma_sim
