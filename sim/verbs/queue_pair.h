// queue_pair.h -- ibv_qp of type RC: state machine, the single post path, the pipeline of
// each work request, RNR waits and the error flush.
//
// A new queue pair accepts receives (INIT/RTR); once connected to its remote queue pair it
// sends (RTS); an error or a disconnect moves it to ERROR, which completes everything
// outstanding, receives included, with IBV_WC_WR_FLUSH_ERR, and every later work request the
// same way. The requester side (requester.cc) posts work requests over its RemoteLink and
// completes them as their outcomes return; the responder side (responder.cc) executes the
// remote's work requests against this process's registered memory. Between post and
// completion every work request passes three stages (stage_gate.h), each of which the
// process's gate may hold back; a held request keeps every later one of its queue pair at
// that stage waiting behind it (pipeline.cc), so RC order holds.
#ifndef RPMA_SIM_VERBS_QUEUE_PAIR_H_
#define RPMA_SIM_VERBS_QUEUE_PAIR_H_

#include <stdint.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sim/common/status.h"
#include "sim/verbs/completion_queue.h"
#include "sim/verbs/connection_tag.h"
#include "sim/verbs/execution_lock.h"
#include "sim/verbs/one_sided.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/receive_queue.h"
#include "sim/verbs/remote_link.h"
#include "sim/verbs/send_queue_slots.h"
#include "sim/verbs/send_request.h"
#include "sim/verbs/shared_receive_queue.h"
#include "sim/verbs/stage_gate.h"
#include "sim/verbs/work_request_trace.h"

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
  // The deeper of the send and receive queues: how many work requests may be under way.
  uint32_t queue_depth() const { return std::max(config_.sq_size, config_.rq_size); }
  // Whether the application may be asleep until a send completion comes (its send CQ is
  // armed), rather than polling for it.
  bool SendCompletionAwaited() const { return config_.send_cq->armed(); }
  State state();

  // Posts a receive buffer. kProvider when the queue pair uses an SRQ or its receive queue
  // is full. In the error state the receive completes at once with IBV_WC_WR_FLUSH_ERR.
  Status PostReceive(const ReceiveRequest& request);

  // The single post path of every send-side operation. kProvider when the queue pair is not
  // connected yet or its send queue is full; everything else is reported by completions.
  Status PostSend(const SendRequest& request);

  // Connects to the remote queue pair (RTR + RTS): work requests go over `link`.
  void Connect(std::shared_ptr<RemoteLink> link);
  // Connects two queue pairs of this process to each other (InprocLink both ways), at once
  // under both execution locks. From then on they share one lock: the first one's domain,
  // or, where an SRQ gives either its domain, each one's lock takes the other's too.
  static void ConnectInProcess(const std::shared_ptr<QueuePair>& a,
                               const std::shared_ptr<QueuePair>& b);

  // The connection this queue pair belongs to (connection_tag.h): set by the connection
  // manager once it is established; read under the execution lock (a gate does).
  void SetTag(ConnectionTag tag);
  const ConnectionTag& tag_locked() const REQUIRES(execution_) { return tag_; }

  // The execution lock as the thread-safety analysis knows it (execution_lock.h).
  const ExecutionCapability& execution() const RETURN_CAPABILITY(execution_) { return execution_; }

  // Holds a queue pair's execution lock, and its in-process peer's, for its scope
  // (execution_lock.h); with two queue pairs, both of theirs at once.
  class SCOPED_CAPABILITY ExecutionScope {
   public:
    explicit ExecutionScope(QueuePair* qp) ACQUIRE(qp->execution_) : lock_(qp->LockExecution()) {}
    ExecutionScope(QueuePair* a, QueuePair* b) ACQUIRE(a->execution_, b->execution_)
        : lock_(a->domain_.get(), b->domain_.get()) {}
    ~ExecutionScope() RELEASE() {}

    ExecutionScope(const ExecutionScope&) = delete;
    ExecutionScope& operator=(const ExecutionScope&) = delete;

   private:
    // Frames sent under the lock leave after it was given back (SendBatch, frame_wire.h).
    SendBatch batch_;
    ExecutionLock lock_;
  };

  // Executes what the link kept to execute with others (RemoteLink::RunDeferredLocked):
  // before the connection manager asks the peer to disconnect, which answers only after
  // what it received before.
  void RunDeferred();

  // Runs `body` under the execution lock (as in an ExecutionScope) if no other thread holds
  // it now, and returns true; false, with nothing run, if one does.
  bool TryRunExecuting(const std::function<void()>& body);

  // Polling any completion queue of this queue pair may drive `source` (progress_source.h).
  void AddProgressSource(const std::weak_ptr<ProgressSource>& source);

  // Moves to the error state and flushes everything outstanding: the first outstanding send
  // completes with `first` (retries exceeded, when a link stopped answering), the rest and
  // every receive with IBV_WC_WR_FLUSH_ERR.
  void EnterError(ibv_wc_status first = IBV_WC_WR_FLUSH_ERR);

  // ibv_destroy_qp: flushes like EnterError and gives the protection domain back at once,
  // even if a thread of the fabric still holds a reference for a moment. Idempotent.
  void Destroy();
  bool destroyed();

  // requester.cc: the responder finished `sequence` (see ResponseSink).
  void OnResponseLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                        size_t length) REQUIRES(execution_);

  // requester.cc: the submitted request `sequence` fails with the requester's own `status`
  // (a local protection error) without leaving: it completes once those before it have,
  // and nothing posted after it is submitted. Nothing if it was flushed already.
  void FailLocallyLocked(uint64_t sequence, ibv_wc_status status) REQUIRES(execution_);

  // responder.cc: executes a work request from the remote queue pair, in arrival order; a
  // message that finds no receive posted waits (RNR), and so does everything after it.
  // False, with nothing done, if more are waiting than any send queue holds (max_qp_wr):
  // only a peer that lies sends that many, and its link must end the connection.
  [[nodiscard]] bool DeliverLocked(InboundRequest inbound) REQUIRES(execution_);
  // Whether it was never connected (INIT): a peer's request then comes before its
  // connection was accepted, which a peer that keeps the protocol never sends.
  bool NeverConnectedLocked() const REQUIRES(execution_) { return state_ == State::kInit; }

  // responder.cc: an in-process peer's write or read (no immediate data, at least a byte),
  // executed at once against this side's memory if it succeeds here now, as DeliverLocked
  // would execute it; false (nothing done) otherwise, and it is delivered as usual. The
  // peer's buffer is the caller's to check.
  bool ExecuteFromPeerLocked(const SendRequest& request, uint64_t sequence) REQUIRES(execution_);

  // A receive was posted where this queue pair takes them from: messages that waited for
  // one go on. Requires the execution lock (ReceivePosted takes it).
  void ReceivePostedLocked() REQUIRES(execution_);
  void ReceivePosted();

  // pipeline.cc: a hold this queue pair waited for was released: what waited goes on.
  void ResumeHeld();

 private:
  // Takes this queue pair's execution lock, and its in-process peer's (for ExecutionScope).
  ExecutionLock LockExecution();

  // ConnectInProcess, for each side: its link to `other`, and RTS.
  void BecomeReadyInProcessLocked(QueuePair* other) REQUIRES(execution_);

  // Whether the request first in line at `stage` may go on: asks the gate unless that
  // request already waited for a hold that is now released. False if it must wait. The
  // gate may also set *fail (StagePoint::fail; null at kSubmit). Inline: with no hold and
  // no gate it is two loads.
  bool PassLocked(Stage stage, const SendRequest& request, uint64_t sequence,
                  ibv_wc_status* fail = nullptr) REQUIRES(execution_) {
    if (!holds_[static_cast<int>(stage)] && !g_stage_gate_slot.installed()) return true;
    return PassHeldOrGatedLocked(stage, request, sequence, fail);
  }
  // Whether nothing can hold or fail a request of this queue pair between its post and its
  // completion: no hold at kSubmit or kComplete, and no gate.
  bool SendsUngatedLocked() const REQUIRES(execution_) {
    return !holds_[static_cast<int>(Stage::kSubmit)] &&
           !holds_[static_cast<int>(Stage::kComplete)] && !g_stage_gate_slot.installed();
  }
  // pipeline.cc
  bool PassHeldOrGatedLocked(Stage stage, const SendRequest& request, uint64_t sequence,
                             ibv_wc_status* fail) REQUIRES(execution_);
  // Submits the requests held at kSubmit, in order, until one is held again.
  void SubmitHeldLocked() REQUIRES(execution_);
  // Completes the answered requests held at kComplete, in order, until one is held again.
  void CompleteHeldLocked() REQUIRES(execution_);

  // requester.cc
  // Carries `request` over the link; `injected` (StagePoint::fail at kSubmit) may make it
  // carry a key no region has.
  void SubmitLocked(const SendRequest& request, uint64_t sequence, ibv_wc_status injected)
      REQUIRES(execution_);
  // Submits `request`, with nothing under way before it and nothing to hold it (PostSend),
  // where it passes its local checks (else false, and nothing was done): if the link
  // executes it at once it completes here without entering in_flight_.
  bool SubmitAloneLocked(const SendRequest& request, uint64_t sequence) REQUIRES(execution_);
  // The link's ExecuteDirectlyLocked, offered to gather `request` with those the
  // application has under way before it.
  DirectExecution ExecuteDirectlyLocked(RemoteLink& link, const SendRequest& request,
                                        uint64_t sequence) REQUIRES(execution_);
  // The request first in line got `outcome` and may complete now. FinishLocked is for
  // pipeline.cc; the requester's own fast path uses the inline FinishInlineLocked.
  void FinishLocked(const SendRequest& request, uint64_t sequence, ibv_wc_status status,
                    const uint8_t* read_data, size_t length) REQUIRES(execution_);
  inline void FinishInlineLocked(const SendRequest& request, uint64_t sequence,
                                 ibv_wc_status status, const uint8_t* read_data, size_t length)
      REQUIRES(execution_);
  void CompleteSendLocked(const SendRequest& request, uint64_t sequence, ibv_wc_status status)
      REQUIRES(execution_);
  // A completion of this queue pair did not fit `cq` (completion_queue.h): the queue pair
  // goes to error and its connection is lost on both sides, as a NIC's CQ overflow ends
  // them. Both happen on the progress engine (the connection manager's lock comes before
  // the execution lock held here); the completions are lost meanwhile all the same.
  void CompletionLostLocked(const CompletionQueue& cq) REQUIRES(execution_);
  // Completes the request that failed at submission if it is first in line now, and moves
  // to the error state (flushing what was posted after it).
  void CompleteFailedLocallyLocked() REQUIRES(execution_);
  void EnterErrorLocked(ibv_wc_status first = IBV_WC_WR_FLUSH_ERR) REQUIRES(execution_);
  ibv_wc_opcode SendCompletionOpcode(SendOpcode opcode) const;
  DeviceModel device() const { return DeviceModel{native_atomic_write_, native_flush_}; }

  // responder.cc
  // Executes `inbound` unless it must wait for a receive; returns false if it waits.
  bool ExecuteInboundLocked(InboundRequest& inbound) REQUIRES(execution_);
  // Places a message in `receive`; *receiver_status is what the receive completes with.
  Outcome ExecuteMessage(const InboundRequest& inbound, const ReceiveRequest& receive,
                         ibv_wc_status* receiver_status) REQUIRES(execution_);
  // Tells the node's persistence model that `len` bytes at `offset` of `region` are about
  // to be placed by `request`, the requester's work request `sequence`.
  void NotePlacementLocked(const MemoryRegion& region, uint64_t offset, uint64_t len,
                           const SendRequest& request, uint64_t sequence) REQUIRES(execution_);
  bool TakeReceiveLocked(ReceiveRequest* request) REQUIRES(execution_);
  void CompleteReceiveLocked(const ReceiveRequest& request, ibv_wc_status status,
                             ibv_wc_opcode opcode, uint32_t byte_len, const SendRequest* sender)
      REQUIRES(execution_);

  const std::shared_ptr<ProtectionDomain> pd_;
  const QueuePairConfig config_;
  const uint32_t qp_num_;
  const bool native_flush_;
  const bool native_atomic_write_;
  ReceiveQueue receives_;
  std::shared_ptr<SendQueueSlots> send_slots_;
  // Its own domain, or its SRQ's; kept for the queue pair's life (a thread may still be
  // waiting for its lock when ConnectInProcess moves the queue pair to its peer's domain).
  const std::shared_ptr<ExecutionDomain> first_domain_;
  // The locks its work takes: its domain and, for an in-process peer in another domain,
  // the peer's. Changed once, by ConnectInProcess under the old ones; read without a lock
  // only to know which locks to take (LockExecution checks them again once it holds them).
  std::shared_ptr<ExecutionDomain> domain_;
  std::shared_ptr<ExecutionDomain> peer_domain_;
  std::atomic<ExecutionDomain*> domain_seen_;
  std::atomic<ExecutionDomain*> peer_domain_seen_{nullptr};

  ExecutionCapability execution_;
  ConnectionTag tag_ GUARDED_BY(execution_);
  State state_ GUARDED_BY(execution_) = State::kInit;
  bool destroyed_ GUARDED_BY(execution_) = false;
  bool completion_lost_ GUARDED_BY(execution_) = false;  // CompletionLostLocked ran
  std::shared_ptr<RemoteLink> link_ GUARDED_BY(execution_);
  struct InFlight {
    SendRequest request;
    uint64_t sequence;
    // Failed at submission with the requester's own error (never sent): it completes so
    // once every request before it has.
    ibv_wc_status fails_locally = IBV_WC_SUCCESS;
  };
  // Posted and not completed, in order. Its first answered_.size() requests have their
  // outcome and wait at kComplete; its last `unsubmitted_` wait at kSubmit.
  std::deque<InFlight> in_flight_ GUARDED_BY(execution_);
  size_t unsubmitted_ GUARDED_BY(execution_) = 0;
  // A request failed at submission and waits for those before it; nothing after it is sent.
  bool failing_locally_ GUARDED_BY(execution_) = false;
  struct Answer {
    ibv_wc_status status;
    bool carried;                    // a read whose bytes a transport carried back
    std::vector<uint8_t> read_data;  // ... and these are they
  };
  // Few and rare: a vector costs nothing while empty.
  std::vector<Answer> answered_ GUARDED_BY(execution_);
  // Arrived, waiting for a receive (RNR) or at kExecute, in order.
  std::deque<InboundRequest> inbound_ GUARDED_BY(execution_);
  // The hold the first request waiting at each stage waits for (null: none).
  std::shared_ptr<StageHold> holds_[3] GUARDED_BY(execution_);
  WorkRequestTrace trace_ GUARDED_BY(execution_);  // its events in the RPMA_SIM_TRACE file, if any
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_QUEUE_PAIR_H_
