// queue_pair.h -- ibv_qp of type RC: state machine, the single post path, RNR waits and the
// error flush.
//
// A new queue pair accepts receives (INIT/RTR); once connected to its remote queue pair it
// sends (RTS); an error or a disconnect moves it to ERROR, which completes everything
// outstanding, receives included, with IBV_WC_WR_FLUSH_ERR, and every later work request the
// same way. The requester side (requester.cc) posts, retries and completes work requests;
// the responder side (responder.cc) executes them against the target's registered memory.
#ifndef RPMA_SIM_VERBS_QUEUE_PAIR_H_
#define RPMA_SIM_VERBS_QUEUE_PAIR_H_

#include <stdint.h>

#include <deque>
#include <memory>

#include "sim/common/status.h"
#include "sim/verbs/completion_queue.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/receive_queue.h"
#include "sim/verbs/send_queue_slots.h"
#include "sim/verbs/send_request.h"
#include "sim/verbs/shared_receive_queue.h"

namespace rpma_sim {

struct QueuePairConfig {
  std::shared_ptr<CompletionQueue> send_cq;  // required
  std::shared_ptr<CompletionQueue> recv_cq;  // receive completions (unless the SRQ has a CQ)
  std::shared_ptr<SharedReceiveQueue> srq;   // optional
  uint32_t sq_size = 10;
  uint32_t rq_size = 10;
};

class QueuePair : public std::enable_shared_from_this<QueuePair> {
 public:
  enum class State { kInit, kReadyToSend, kError };

  QueuePair(std::shared_ptr<ProtectionDomain> pd, QueuePairConfig config);
  ~QueuePair();

  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  // Registers with the SRQ, if any (needs shared_from_this, so not in the constructor).
  void AttachToSharedReceiveQueue();

  uint32_t qp_num() const { return qp_num_; }
  ProtectionDomain* pd() const { return pd_.get(); }
  State state();

  // Posts a receive buffer. kProvider when the queue pair uses an SRQ or its receive queue
  // is full. In the error state the receive completes at once with IBV_WC_WR_FLUSH_ERR.
  Status PostReceive(const ReceiveRequest& request);

  // The single post path of every send-side operation. kProvider when the queue pair is not
  // connected yet or its send queue is full; everything else is reported by completions.
  Status PostSend(const SendRequest& request);

  // Connects to the remote queue pair (RTR + RTS).
  void Connect(const std::shared_ptr<QueuePair>& remote);

  // Moves to the error state and flushes everything outstanding.
  void EnterError();

  // A receive was posted where this queue pair takes them from: the remote's sends that
  // waited for one (RNR) go on. Requires the execution lock.
  void ReceivePostedLocked();

 private:
  // What executing one work request at the responder produced.
  struct Outcome {
    bool receiver_not_ready = false;  // no receive posted: retry later (RNR)
    ibv_wc_status status = IBV_WC_SUCCESS;
    bool remote_error = false;  // the responder's queue pair goes to the error state too
  };

  // requester.cc
  void ExecuteOrQueueLocked(const SendRequest& request, uint64_t sequence);
  void RetryPendingLocked();
  void CompleteSendLocked(const SendRequest& request, uint64_t sequence, ibv_wc_status status);
  void EnterErrorLocked();
  ibv_wc_opcode SendCompletionOpcode(SendOpcode opcode) const;

  // responder.cc
  Outcome Execute(const SendRequest& request, QueuePair* responder);
  Outcome ExecuteMessage(const SendRequest& request, QueuePair* responder);
  bool TakeReceiveLocked(ReceiveRequest* request);
  void CompleteReceiveLocked(const ReceiveRequest& request, ibv_wc_status status,
                             ibv_wc_opcode opcode, uint32_t byte_len, const SendRequest* sender);

  const std::shared_ptr<ProtectionDomain> pd_;
  const QueuePairConfig config_;
  const uint32_t qp_num_;
  const bool native_flush_;
  const bool native_atomic_write_;
  ReceiveQueue receives_;
  std::shared_ptr<SendQueueSlots> send_slots_;

  // Guarded by the execution lock.
  State state_ = State::kInit;
  std::weak_ptr<QueuePair> remote_;
  struct Pending {
    SendRequest request;
    uint64_t sequence;
  };
  std::deque<Pending> pending_;  // sends waiting for a receive at the remote, and all after
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_QUEUE_PAIR_H_
