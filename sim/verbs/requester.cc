// requester.cc -- the post path of a queue pair: local checks, send-queue slots, submission
// over the remote link, completions in posting order.
#include <string.h>

#include "sim/common/guarded_copy.h"
#include "sim/common/log.h"
#include "sim/common/trace.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {
namespace {

// The requester's buffer: registered in its protection domain, inside the region, with the
// access the operation needs (reads write into it).
ibv_wc_status CheckLocal(const SendRequest& request, const ProtectionDomain* pd) {
  if (!request.local || request.length == 0) return IBV_WC_SUCCESS;
  const MemoryRegion& local = *request.local;
  // No lock: what copies from or to the buffer later checks again under the table's lock.
  if (!MemoryRegionTable::Get().IsRegistered(local) || local.pd != pd) return IBV_WC_LOC_PROT_ERR;
  if (!local.ContainsOffset(request.local_offset, request.length)) return IBV_WC_LOC_PROT_ERR;
  int required = request.opcode == SendOpcode::kRead ? IBV_ACCESS_LOCAL_WRITE : 0;
  if ((local.access & required) != required) return IBV_WC_LOC_PROT_ERR;
  return IBV_WC_SUCCESS;
}

}  // namespace

inline void QueuePair::FinishInlineLocked(const SendRequest& request, uint64_t sequence,
                                          ibv_wc_status status, const uint8_t* read_data,
                                          size_t length) {
  if (status == IBV_WC_SUCCESS && read_data != nullptr && request.opcode == SendOpcode::kRead) {
    // A read carried by a transport lands in the requester's buffer only now.
    status = CheckLocal(request, pd());
    if (length != request.length) status = IBV_WC_BAD_RESP_ERR;  // a peer's malformed answer
    if (status == IBV_WC_SUCCESS) {
      ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
      // Still registered, now, and reachable (guarded_copy.h).
      if (!MemoryRegionTable::Get().IsRegisteredLocked(*request.local) ||
          GuardedCopy(request.local->addr + request.local_offset, read_data, length) !=
              CopyResult::kCopied)
        status = IBV_WC_LOC_PROT_ERR;
    }
  }
  CompleteSendLocked(request, sequence, status);
  if (status != IBV_WC_SUCCESS) EnterErrorLocked();
  if (failing_locally_) CompleteFailedLocallyLocked();
}

void QueuePair::FinishLocked(const SendRequest& request, uint64_t sequence, ibv_wc_status status,
                             const uint8_t* read_data, size_t length) {
  FinishInlineLocked(request, sequence, status, read_data, length);
}

Status QueuePair::PostSend(const SendRequest& request) {
  ExecutionScope lock(this);
  if (state_ == State::kInit) {
    SIM_LOG_ERROR("ibv_post_send: the queue pair is not connected");
    return Status::kProvider;
  }
  uint64_t sequence;
  if (!send_slots_->Acquire(&sequence)) {
    SIM_LOG_ERROR("ibv_post_send: the send queue is full (%u work requests outstanding)",
                  send_slots_->in_use());
    return Status::kProvider;
  }
  if (state_ == State::kError) {
    CompleteSendLocked(request, sequence, IBV_WC_WR_FLUSH_ERR);
    return Status::kOk;
  }
  // Alone (the common case of a polling application): it may complete at once, without the
  // copy into in_flight_ and its push and pop. A trace needs the usual path's post time.
  if (in_flight_.empty() && !failing_locally_ && !trace::On() && SendsUngatedLocked() &&
      SubmitAloneLocked(request, sequence))
    return Status::kOk;
  in_flight_.push_back(InFlight{request, sequence});
  if (trace::On()) in_flight_.back().request.trace_post_ns = trace::NowNs();
  // Behind a held request, or held itself: it waits at kSubmit (pipeline.cc).
  ibv_wc_status injected = IBV_WC_SUCCESS;
  if (unsubmitted_ > 0 || failing_locally_ ||
      !PassLocked(Stage::kSubmit, request, sequence, &injected)) {
    ++unsubmitted_;
    return Status::kOk;
  }
  SubmitLocked(request, sequence, injected);
  return Status::kOk;
}

void QueuePair::SubmitLocked(const SendRequest& request, uint64_t sequence,
                             ibv_wc_status injected) {
  // Held here: an error outcome delivered during the call resets link_.
  std::shared_ptr<RemoteLink> link = link_;
  // The requester's own checks come when the request's turn to leave comes, as a NIC makes
  // them: a request that fails them completes after those before it.
  const ibv_wc_status local_status = CheckLocal(request, pd());
  if (local_status != IBV_WC_SUCCESS) injected = local_status;
  if (IsLocalRequesterStatus(injected)) {
    if (link) link->RunDeferredLocked();  // its turn comes after theirs
    FailLocallyLocked(sequence, injected);
    return;
  }
  if (injected == IBV_WC_REM_ACCESS_ERR) {
    SendRequest bad_key = request;
    bad_key.rkey = 0;  // no region has it (memory_region.cc)
    link->SubmitLocked(bad_key, sequence);
    return;
  }
  if (IsResponderStatus(injected)) {
    SendRequest failing = request;
    failing.responder_fails = injected;  // the responder answers with it, wherever it is
    link->SubmitLocked(failing, sequence);
    return;
  }
  switch (ExecuteDirectlyLocked(*link, request, sequence)) {
    case DirectExecution::kExecuted:
      OnResponseLocked(sequence, Outcome{}, nullptr, 0);  // its bytes moved already
      return;
    case DirectExecution::kKept:
      return;
    case DirectExecution::kSubmit:
      link->SubmitLocked(request, sequence);
      return;
  }
}

bool QueuePair::SubmitAloneLocked(const SendRequest& request, uint64_t sequence) {
  std::shared_ptr<RemoteLink> link = link_;  // as in SubmitLocked
  if (!link || CheckLocal(request, pd()) != IBV_WC_SUCCESS) return false;
  const DirectExecution how = ExecuteDirectlyLocked(*link, request, sequence);
  if (how == DirectExecution::kExecuted) {
    // What OnResponseLocked does for the first in line with nothing held, here.
    CompleteSendLocked(request, sequence, IBV_WC_SUCCESS);
    return true;
  }
  in_flight_.push_back(InFlight{request, sequence});  // before anything can answer it
  if (how == DirectExecution::kSubmit) link->SubmitLocked(request, sequence);
  return true;
}

DirectExecution QueuePair::ExecuteDirectlyLocked(RemoteLink& link, const SendRequest& request,
                                                 uint64_t sequence) {
  // Where the application has others under way, the link may gather it with them.
  const Batching batching =
      send_slots_->EarlierOutstanding(sequence) ? Batching::kMayWait : Batching::kNow;
  return link.ExecuteDirectlyLocked(request, sequence, batching);
}

void QueuePair::FailLocallyLocked(uint64_t sequence, ibv_wc_status status) {
  // Flushed already if one of those before it failed meanwhile (then it is not there).
  for (size_t i = in_flight_.size(); i-- > 0;) {
    if (in_flight_[i].sequence != sequence) continue;
    // It never leaves: nothing after it is submitted, and it completes in its turn.
    in_flight_[i].fails_locally = status;
    failing_locally_ = true;
    CompleteFailedLocallyLocked();
    return;
  }
}

void QueuePair::CompleteFailedLocallyLocked() {
  if (in_flight_.empty() || in_flight_.front().fails_locally == IBV_WC_SUCCESS) return;
  InFlight failed = std::move(in_flight_.front());
  in_flight_.pop_front();
  failing_locally_ = false;
  CompleteSendLocked(failed.request, failed.sequence, failed.fails_locally);
  EnterErrorLocked();
}

void QueuePair::OnResponseLocked(uint64_t sequence, const Outcome& outcome,
                                 const uint8_t* read_data, size_t length) {
  // An outcome for a request the error flush already completed is stale; outcomes come in
  // order, so this one is for the first request not answered yet (the first of all when
  // nothing is held: the common case, kept cheap).
  size_t answered = answered_.size();
  bool nothing_held = answered == 0 && unsubmitted_ == 0;
  bool stale = nothing_held ? in_flight_.empty() || in_flight_.front().sequence != sequence
                            : in_flight_.size() - unsubmitted_ <= answered ||
                                  in_flight_[answered].sequence != sequence;
  if (stale) return;
  ibv_wc_status status = outcome.status;
  if (answered == 0 &&
      PassLocked(Stage::kComplete, in_flight_.front().request, sequence, &status)) {
    SendRequest request = std::move(in_flight_.front().request);
    in_flight_.pop_front();
    FinishInlineLocked(request, sequence, status, read_data, length);
    return;
  }
  // Its completion waits (behind a held one, or held itself): the outcome is kept.
  answered_.push_back(Answer{outcome.status, read_data != nullptr, {}});
  if (read_data != nullptr) answered_.back().read_data.assign(read_data, read_data + length);
}

ibv_wc_opcode QueuePair::SendCompletionOpcode(SendOpcode opcode) const {
  switch (opcode) {
    case SendOpcode::kWrite:
      return IBV_WC_RDMA_WRITE;
    case SendOpcode::kRead:
      return IBV_WC_RDMA_READ;
    case SendOpcode::kAtomicWrite:
      return native_atomic_write_ ? IBV_WC_ATOMIC_WRITE : IBV_WC_RDMA_WRITE;
    case SendOpcode::kFlush:
      return native_flush_ ? static_cast<ibv_wc_opcode>(8) /* IBV_WC_FLUSH */ : IBV_WC_RDMA_READ;
    case SendOpcode::kSend:
      return IBV_WC_SEND;
  }
  return IBV_WC_SEND;
}

void QueuePair::CompleteSendLocked(const SendRequest& request, uint64_t sequence,
                                   ibv_wc_status status) {
  if (trace::On()) trace_.Sent(qp_num_, tag_, request, sequence, status);
  if (status == IBV_WC_SUCCESS && !request.signaled) return;  // holds its slot until later
  // Of the sends, only a read says how many bytes it moved.
  uint32_t byte_len =
      request.opcode == SendOpcode::kRead ? static_cast<uint32_t>(request.length) : 0;
  ibv_wc wc = MakeWorkCompletion(request.wr_id, status, qp_num_,
                                 SendCompletionOpcode(request.opcode), byte_len);
  if (!config_.send_cq->Push(wc, send_slots_, sequence)) CompletionLostLocked(*config_.send_cq);
}

}  // namespace rpma_sim
