// remote_link.h -- how a queue pair's work requests reach the responder and how their
// outcomes come back, whatever carries them (a direct call in one process, or a transport).
//
// The requester numbers every work request (its send-queue sequence) and submits it over its
// RemoteLink; the responder executes it (QueuePair::DeliverLocked) and answers through the
// request's ResponseSink. Responses come back in submission order, as RC guarantees.
#ifndef RPMA_SIM_VERBS_REMOTE_LINK_H_
#define RPMA_SIM_VERBS_REMOTE_LINK_H_

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <vector>

#include "sim/common/guarded_copy.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

// What executing a work request at the responder gave.
struct Outcome {
  ibv_wc_status status = IBV_WC_SUCCESS;
};

// Receives the outcome of work requests submitted by one requester.
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;

  // The responder finished `sequence`. For a successful read carried by a transport,
  // `read_data` holds its `length` bytes; nullptr when the bytes were placed directly (in
  // process). Requires the execution lock.
  virtual void RespondLocked(uint64_t sequence, const Outcome& outcome, const uint8_t* read_data,
                             size_t length) = 0;

  // The same for a successful read whose bytes the responder copied into `read_data` (not
  // empty), which the sink may keep: a transport sends them from there instead of copying
  // them once more.
  virtual void RespondWithBytesLocked(uint64_t sequence, const Outcome& outcome,
                                      std::vector<uint8_t> read_data) {
    RespondLocked(sequence, outcome, read_data.data(), read_data.size());
  }
};

// The initiator's buffer of a work request as the responder reaches it: each link says how
// (in process: the requester's registered memory itself; over a wire: bytes carried in the
// frame, or the requester's memory in another process). The responder calls it with the
// memory-region table locked (shared).
class InitiatorBuffer {
 public:
  virtual ~InitiatorBuffer() = default;

  // A write's or send's bytes: copies `length` of them to `target` (a guarded copy,
  // guarded_copy.h). IBV_WC_LOC_PROT_ERR if the initiator's buffer went away meanwhile or
  // could not be read, IBV_WC_REM_ACCESS_ERR if `target` could not be written.
  virtual ibv_wc_status CopyTo(uint8_t* target, size_t length)
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) = 0;

  // A read's bytes: puts `length` bytes from `source` into the initiator's buffer, or keeps
  // them in `*carried` for the response to carry back. IBV_WC_LOC_PROT_ERR if the buffer
  // went away or could not be written, IBV_WC_REM_ACCESS_ERR if `source` could not be read.
  virtual ibv_wc_status CopyFrom(const uint8_t* source, size_t length,
                                 std::vector<uint8_t>* carried)
      REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) = 0;

  // The buffer itself, where it is memory of this process that stays registered while the
  // table's shared lock is held (a copy through the kernel starts from it); null otherwise.
  virtual uint8_t* LocalBytes() REQUIRES_SHARED(MemoryRegionTable::Get().mutex()) {
    return nullptr;
  }
};

// The status a guarded copy gives a work request, where the initiator's buffer is the
// copy's source (a write's or send's bytes) or its target (a read's).
inline ibv_wc_status StatusOfPlacing(CopyResult result) {
  return result == CopyResult::kCopied              ? IBV_WC_SUCCESS
         : result == CopyResult::kTargetUnreachable ? IBV_WC_REM_ACCESS_ERR
                                                    : IBV_WC_LOC_PROT_ERR;
}
inline ibv_wc_status StatusOfFetching(CopyResult result) {
  return result == CopyResult::kCopied              ? IBV_WC_SUCCESS
         : result == CopyResult::kSourceUnreachable ? IBV_WC_REM_ACCESS_ERR
                                                    : IBV_WC_LOC_PROT_ERR;
}

// A work request as the responder sees it.
struct InboundRequest {
  // The request's fields; `request.local` means nothing here (it is the initiator's).
  SendRequest request;
  uint64_t sequence = 0;
  std::unique_ptr<InitiatorBuffer> initiator;  // null for requests that move no bytes
  std::shared_ptr<ResponseSink> reply;
  bool admitted = false;  // passed the kExecute stage (it may still wait for a receive)
  // Not IBV_WC_SUCCESS: the receive it consumes completes with this status (a receiver's
  // error the stage gate chose), and the requester gets the matching remote error.
  ibv_wc_status receive_fails = IBV_WC_SUCCESS;
};

// Whether a work request executed directly may wait to execute with others.
enum class Batching { kNow, kMayWait };
// What RemoteLink::ExecuteDirectlyLocked did with a work request.
enum class DirectExecution { kSubmit, kExecuted, kKept };

// The requester's end of the path to its responder.
class RemoteLink {
 public:
  virtual ~RemoteLink() = default;

  // Carries `request` to the responder. Requires the execution lock.
  virtual void SubmitLocked(const SendRequest& request, uint64_t sequence) = 0;

  // Executes `request` on the responder's memory itself, at once, if that is possible and
  // it succeeds there (a link that reaches the responder's memory: direct_target.h):
  // kExecuted; kSubmit if it must be submitted. Requires the execution lock.
  //
  // With kMayWait (the queue pair offers it for a request posted while an earlier one's
  // completion is not polled yet: the application has more than one under way) the link
  // may instead keep it to execute later with others, where that saves a system call per
  // request (kKept); the queue pair then hears of its outcome as of a submitted one. What is kept
  // executes in order, before anything submitted or executed after it: when the application polls,
  // on the link's turn of the progress engine (at once if the application may sleep on its
  // completion fd, otherwise soon), or when a request cannot wait (RunDeferredLocked).
  virtual DirectExecution ExecuteDirectlyLocked(const SendRequest& request, uint64_t sequence,
                                                Batching batching) {
    return DirectExecution::kSubmit;
  }

  // Executes what ExecuteDirectlyLocked kept (Batching::kMayWait), answering the queue
  // pair as for any request. Requires the execution lock.
  virtual void RunDeferredLocked() {}
  // The queue pair is connected over this link (RTS). Requires the execution lock.
  virtual void ConnectedLocked() {}

  // The queue pair is about to report its outstanding requests flushed: afterwards the
  // responder must not touch this side's buffers any more, nor the remote this side's
  // memory. Requires the execution lock.
  virtual void RevokeLocked() {}
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_REMOTE_LINK_H_
