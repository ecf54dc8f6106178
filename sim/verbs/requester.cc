// requester.cc -- the post path of a queue pair: send-queue slots, RC ordering behind a send
// that waits for a receive (RNR), completions and the error transition.
#include <string.h>

#include "sim/common/log.h"
#include "sim/verbs/execution_lock.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {

Status QueuePair::PostSend(const SendRequest& request) {
  std::lock_guard<std::mutex> lock(ExecutionMutex());
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
  if (!pending_.empty()) {
    pending_.push_back(Pending{request, sequence});  // RC: nothing overtakes a waiting send
    return Status::kOk;
  }
  ExecuteOrQueueLocked(request, sequence);
  return Status::kOk;
}

void QueuePair::ExecuteOrQueueLocked(const SendRequest& request, uint64_t sequence) {
  std::shared_ptr<QueuePair> responder = remote_.lock();
  Outcome outcome;
  if (!responder || responder->state_ != State::kReadyToSend) {
    outcome.status = IBV_WC_RETRY_EXC_ERR;  // nobody answers any more
  } else {
    outcome = Execute(request, responder.get());
  }
  if (outcome.receiver_not_ready) {
    pending_.push_back(Pending{request, sequence});
    return;
  }
  CompleteSendLocked(request, sequence, outcome.status);
  if (outcome.status != IBV_WC_SUCCESS) {
    if (outcome.remote_error && responder) responder->EnterErrorLocked();
    EnterErrorLocked();
  }
}

void QueuePair::RetryPendingLocked() {
  while (!pending_.empty() && state_ == State::kReadyToSend) {
    Pending pending = std::move(pending_.front());
    pending_.pop_front();
    size_t before = pending_.size();
    ExecuteOrQueueLocked(pending.request, pending.sequence);
    if (pending_.size() > before) {
      // Still no receive: put it back at the head, where it was.
      pending_.push_front(std::move(pending_.back()));
      pending_.pop_back();
      return;
    }
  }
}

ibv_wc_opcode QueuePair::SendCompletionOpcode(SendOpcode opcode) const {
  switch (opcode) {
    case SendOpcode::kWrite: return IBV_WC_RDMA_WRITE;
    case SendOpcode::kRead: return IBV_WC_RDMA_READ;
    case SendOpcode::kAtomicWrite:
      return native_atomic_write_ ? IBV_WC_ATOMIC_WRITE : IBV_WC_RDMA_WRITE;
    case SendOpcode::kFlush:
      return native_flush_ ? static_cast<ibv_wc_opcode>(8) /* IBV_WC_FLUSH */ : IBV_WC_RDMA_READ;
    case SendOpcode::kSend: return IBV_WC_SEND;
  }
  return IBV_WC_SEND;
}

void QueuePair::CompleteSendLocked(const SendRequest& request, uint64_t sequence,
                                   ibv_wc_status status) {
  if (status == IBV_WC_SUCCESS && !request.signaled) return;  // holds its slot until later
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  wc.wr_id = request.wr_id;
  wc.status = status;
  wc.qp_num = qp_num_;
  if (status == IBV_WC_SUCCESS) {
    wc.opcode = SendCompletionOpcode(request.opcode);
    if (request.opcode == SendOpcode::kRead) wc.byte_len = static_cast<uint32_t>(request.length);
  }
  config_.send_cq->Push(wc, send_slots_, sequence);
}

}  // namespace rpma_sim
