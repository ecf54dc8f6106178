// shm_mode.h -- what a wire link does once its connection runs over a shared-memory
// segment: as requester, a write or read may execute on the peer's memory directly
// (direct_request.h) and a large payload may stay where it is for the peer to fetch by
// address; as responder, the peer may execute on this side's memory (direct_target.h) and
// a request may name the requester's memory by address. Before the switch (and over TCP)
// none of it applies. Thread-safe on its own.
//
// A requester's write or read that would copy through process_vm (a range the peer's files
// do not hold) may also wait, with others, for one system call (TryExecute, ExecuteDeferred).
#ifndef RPMA_SIM_VERBS_SHM_MODE_H_
#define RPMA_SIM_VERBS_SHM_MODE_H_

#include <stdint.h>

#include <atomic>
#include <memory>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/transport/shm_segment.h"
#include "sim/verbs/direct_request.h"
#include "sim/verbs/direct_target.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

class QueuePair;

class ShmMode {
 public:
  ShmMode() = default;
  ~ShmMode();
  ShmMode(const ShmMode&) = delete;
  ShmMode& operator=(const ShmMode&) = delete;

  // The connection runs over `segment` from now on; `qp` (null: none bound yet) is the queue
  // pair whose memory the peer may reach, once it is connected (SetConnected).
  void Use(std::shared_ptr<ShmSegment> segment, const std::shared_ptr<QueuePair>& qp);
  // The queue pair is connected: the peer's direct access to it opens, if it runs over a
  // segment (now or from Use on).
  void SetConnected();
  // Whether Use was called: before it (and over TCP) every other call here has nothing to
  // do, and a link need not make it.
  bool InUse() const { return in_use_.load(std::memory_order_acquire); }

  // Executes `request`, the requester's work request `sequence`, on the peer's memory if
  // that succeeds now, or keeps it to execute with others (ExecuteOnPeer, with what this
  // object keeps); *tell_target as there. Called by one requester at a time (its queue
  // pair's execution lock).
  DirectStep TryExecute(const SendRequest& request, uint64_t sequence, Batching batching,
                        bool* tell_target);

  // Whether requests wait for ExecuteDeferred (a hint, without the lock).
  bool HasDeferred() const { return deferred_count_.load(std::memory_order_acquire) > 0; }
  // Takes the requests TryExecute kept, in order, and executes them (ExecuteBatchOnPeer): the
  // first *executed of them did; the caller submits the rest. *tell_target as TryExecute's.
  std::vector<DeferredRequest> ExecuteDeferred(size_t* executed, bool* tell_target);

  // The segment through which a REQUEST may name the requester's memory by address (when
  // this side reaches the peer's memory), or null: then such a request is malformed.
  std::shared_ptr<ShmSegment> ReferencePeer();
  // Whether the peer can reach this side's memory: a payload may then stay here.
  bool PeerReachesUs();
  // The peer's direct access to this side (null before Use, or over TCP).
  std::shared_ptr<DirectTarget> target();

  // The connection failed: the peer may no longer reach this side's buffers nor its
  // memory, and this side no longer executes on the peer's; what the peer placed directly
  // is told to the persistence model.
  void Revoke();

 private:
  Mutex mutex_;
  std::shared_ptr<ShmSegment> segment_ GUARDED_BY(mutex_);
  std::shared_ptr<DirectTarget> target_ GUARDED_BY(mutex_);
  bool connected_ GUARDED_BY(mutex_) = false;
  std::atomic<bool> in_use_{false};  // set once, after segment_
  // The segment through which this side reaches the peer's memory directly, or null. Set
  // once (segment_ keeps it); an atomic, so that a request finds it without the lock.
  std::atomic<ShmSegment*> direct_peer_{nullptr};
  // This process's mappings of the peer's region files: one requester uses them at a time,
  // across its direct copies (mapping_guard.h is a leaf, the region table comes after).
  Mutex mappings_mutex_;
  PeerMappings mappings_ GUARDED_BY(mappings_mutex_);
  // The requests TryExecute kept, and how many (read without the lock by HasDeferred).
  std::vector<DeferredRequest> deferred_ GUARDED_BY(mappings_mutex_);
  std::atomic<size_t> deferred_count_{0};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_SHM_MODE_H_
