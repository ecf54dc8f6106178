// responder.cc -- executing the remote's work requests against this process's memory:
// rkey, bounds and access checks, placing or fetching the bytes, consuming receives (or
// waiting for one: RNR), and the statuses hardware reports to both sides. One-sided
// operations run through the executor (one_sided.h).
#include "sim/common/trace.h"
#include "sim/fabric/device.h"
#include "sim/verbs/one_sided.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {
namespace {

// Copies a send's bytes to `target` from wherever the link reaches the initiator's buffer
// (InitiatorBuffer::CopyTo's status).
ibv_wc_status FetchSource(const InboundRequest& inbound, uint8_t* target)
    REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
  if (!inbound.initiator) return IBV_WC_LOC_PROT_ERR;
  return inbound.initiator->CopyTo(target, inbound.request.length);
}

bool NeedsReceive(const SendRequest& request) {
  return request.opcode == SendOpcode::kSend || request.with_imm;
}

}  // namespace

void QueuePair::NotePlacementLocked(const MemoryRegion& region, uint64_t offset, uint64_t len,
                                    const SendRequest& request, uint64_t sequence) {
  RegisteredMemory::NotePlaced(pd(), qp_num_, region, offset, len, request, sequence);
}

bool QueuePair::DeliverLocked(InboundRequest inbound) {
  if (state_ != State::kReadyToSend) {
    // Nobody answers from a queue pair in error: the requester's retries run out.
    inbound.reply->RespondLocked(inbound.sequence, Outcome{IBV_WC_RETRY_EXC_ERR}, nullptr, 0);
    return true;
  }
  if (inbound_.size() >= kMaxQueuePairWorkRequests) return false;
  if (!inbound_.empty() || !ExecuteInboundLocked(inbound)) inbound_.push_back(std::move(inbound));
  return true;
}

void QueuePair::ReceivePostedLocked() {
  while (!inbound_.empty() && state_ == State::kReadyToSend) {
    // Taken out first: an error while executing flushes inbound_.
    InboundRequest next = std::move(inbound_.front());
    inbound_.pop_front();
    if (!ExecuteInboundLocked(next)) {
      inbound_.push_front(std::move(next));  // still held or no receive: first in line
      return;
    }
  }
}

bool QueuePair::ExecuteInboundLocked(InboundRequest& inbound) {
  const SendRequest& request = inbound.request;
  if (!inbound.admitted) {
    ibv_wc_status injected = IBV_WC_SUCCESS;
    if (!PassLocked(Stage::kExecute, request, inbound.sequence, &injected)) return false;  // held
    inbound.admitted = true;
    // A remote error its requester's fault rule chose travels with the request.
    if (injected == IBV_WC_SUCCESS) injected = request.responder_fails;
    if (injected != IBV_WC_SUCCESS && NeedsReceive(request) && IsReceiverStatus(injected)) {
      inbound.receive_fails = injected;  // once it has its receive, below
    } else if (injected != IBV_WC_SUCCESS) {
      // A remote error the gate chose: answered as such, nothing touched, both sides fail.
      std::shared_ptr<ResponseSink> reply = inbound.reply;
      reply->RespondLocked(inbound.sequence, Outcome{injected}, nullptr, 0);
      EnterErrorLocked();
      return true;
    }
  }
  ReceiveRequest receive;
  if (NeedsReceive(request) && !TakeReceiveLocked(&receive)) return false;  // RNR: wait
  if (inbound.receive_fails != IBV_WC_SUCCESS) {
    // A receiver's error the gate chose: the receive completes with it, nothing placed.
    ibv_wc_status remote =
        inbound.receive_fails == IBV_WC_LOC_LEN_ERR ? IBV_WC_REM_INV_REQ_ERR : IBV_WC_REM_OP_ERR;
    std::shared_ptr<ResponseSink> reply = inbound.reply;
    reply->RespondLocked(inbound.sequence, Outcome{remote}, nullptr, 0);
    CompleteReceiveLocked(receive, inbound.receive_fails, IBV_WC_RECV, 0, nullptr);
    EnterErrorLocked();
    return true;
  }

  Outcome outcome;
  std::vector<uint8_t> read_data;
  ibv_wc_status receiver_status = IBV_WC_SUCCESS;  // of the receive consumed, if any
  ibv_wc_opcode receiver_opcode = IBV_WC_RECV;
  if (request.opcode == SendOpcode::kSend) {
    outcome = ExecuteMessage(inbound, receive, &receiver_status);
  } else {
    ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
    RegisteredMemory memory(pd(), qp_num_);
    outcome = ExecuteOneSided(request, inbound.sequence, memory, inbound.initiator.get(), device(),
                              &read_data);
    receiver_opcode = IBV_WC_RECV_RDMA_WITH_IMM;
    if (outcome.status != IBV_WC_SUCCESS) receiver_status = IBV_WC_WR_FLUSH_ERR;
  }
  // The outcome leaves before the receiver's completion appears: an application that
  // reacts to its receive (by disconnecting, say) cannot overtake the acknowledgement.
  std::shared_ptr<ResponseSink> reply = inbound.reply;
  if (read_data.empty())
    reply->RespondLocked(inbound.sequence, outcome, nullptr, 0);
  else
    reply->RespondWithBytesLocked(inbound.sequence, outcome, std::move(read_data));
  if (NeedsReceive(request)) {
    bool placed = receiver_status == IBV_WC_SUCCESS;
    CompleteReceiveLocked(receive, receiver_status, placed ? receiver_opcode : IBV_WC_RECV,
                          placed ? static_cast<uint32_t>(request.length) : 0,
                          placed ? &request : nullptr);
  }
  // A remote access or receive error puts the responder's queue pair in error too.
  if (outcome.status != IBV_WC_SUCCESS) EnterErrorLocked();
  return true;
}

bool QueuePair::ExecuteFromPeerLocked(const SendRequest& request, uint64_t sequence) {
  // Only where the usual path would execute it at once and succeed: nothing ahead of it
  // here (a message waiting for a receive), no gate or hold at kExecute.
  if (state_ != State::kReadyToSend || !inbound_.empty() ||
      holds_[static_cast<int>(Stage::kExecute)] || g_stage_gate_slot.installed() ||
      !RunsWithoutResponder(request, AtomicWrites::kNone))
    return false;
  ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
  uint8_t* local = RegisteredLocalBytes(request);
  if (local == nullptr) return false;  // the usual path reports it
  HeldLocalBuffer initiator(local);
  RegisteredMemory memory(pd(), qp_num_);
  std::vector<uint8_t> no_read_data;  // a local buffer takes a read's bytes itself
  return ExecuteOneSided(request, sequence, memory, &initiator, device(), &no_read_data).status ==
         IBV_WC_SUCCESS;
}

Outcome QueuePair::ExecuteMessage(const InboundRequest& inbound, const ReceiveRequest& receive,
                                  ibv_wc_status* receiver_status) {
  const SendRequest& request = inbound.request;
  ReaderLock table_lock(&MemoryRegionTable::Get().mutex());
  Outcome outcome;
  if (request.length > receive.length) {
    *receiver_status = IBV_WC_LOC_LEN_ERR;
    outcome.status = IBV_WC_REM_INV_REQ_ERR;
  } else if (request.length > 0 &&
             (!MemoryRegionTable::Get().IsRegisteredLocked(*receive.region) ||
              receive.region->pd != pd() ||
              !receive.region->ContainsOffset(receive.offset, request.length) ||
              (receive.region->access & IBV_ACCESS_LOCAL_WRITE) == 0)) {
    *receiver_status = IBV_WC_LOC_PROT_ERR;
    outcome.status = IBV_WC_REM_OP_ERR;
  } else if (request.length > 0) {
    NotePlacementLocked(*receive.region, receive.offset, request.length, request, inbound.sequence);
    ibv_wc_status copied = FetchSource(inbound, receive.region->addr + receive.offset);
    if (copied == IBV_WC_REM_ACCESS_ERR) {
      // The receive buffer's pages are gone (guarded_copy.h): as for one not registered.
      *receiver_status = IBV_WC_LOC_PROT_ERR;
      outcome.status = IBV_WC_REM_OP_ERR;
    } else if (copied != IBV_WC_SUCCESS) {
      *receiver_status = IBV_WC_WR_FLUSH_ERR;
      outcome.status = IBV_WC_LOC_PROT_ERR;  // the requester's buffer went away meanwhile
    }
  }
  return outcome;
}

bool QueuePair::TakeReceiveLocked(ReceiveRequest* request) {
  if (config_.srq) return config_.srq->receives().Take(request);
  return receives_.Take(request);
}

void QueuePair::CompleteReceiveLocked(const ReceiveRequest& request, ibv_wc_status status,
                                      ibv_wc_opcode opcode, uint32_t byte_len,
                                      const SendRequest* sender) {
  if (trace::On()) trace_.Received(qp_num_, tag_, request, status, opcode, byte_len);
  ibv_wc wc = MakeWorkCompletion(request.wr_id, status, qp_num_, opcode, byte_len);
  if (status == IBV_WC_SUCCESS && sender != nullptr && sender->with_imm) {
    wc.wc_flags = IBV_WC_WITH_IMM;
    wc.imm_data = sender->imm_data;
  }
  CompletionQueue* cq = config_.srq && config_.srq->rcq() ? config_.srq->rcq().get()
                        : config_.recv_cq                 ? config_.recv_cq.get()
                                                          : config_.send_cq.get();
  if (!cq->Push(wc)) CompletionLostLocked(*cq);
}

}  // namespace rpma_sim
