// shm_mode.cc -- a wire link's direct access and references over a shared-memory segment.
#include "sim/verbs/shm_mode.h"

#include "sim/fabric/config.h"
#include "sim/transport/process_vm.h"
#include "sim/verbs/queue_pair.h"

namespace rpma_sim {

ShmMode::~ShmMode() {
  std::shared_ptr<DirectTarget> target = this->target();
  if (target) target->Close();
}

void ShmMode::Use(std::shared_ptr<ShmSegment> segment, const std::shared_ptr<QueuePair>& qp) {
  {
    MutexLock lock(&mutex_);
    segment_ = segment;
  }
  in_use_.store(true, std::memory_order_release);
  if (!ShmDirectEnabled() || !qp) return;
  // Without process_vm (RPMA_SIM_SHM_PROCESS_VM=0, or Yama's ptrace_scope), direct access
  // still reaches the regions the peer's files hold (file-backed, or heap pages moved into
  // a memfd): opening /proc/<pid>/fd needs only ptrace's read mode.
  direct_peer_.store(segment.get());
  // Started with no lock held: it takes the region table's.
  std::shared_ptr<DirectTarget> target = DirectTarget::Start(segment, qp->pd(), qp->qp_num());
  bool connected;
  {
    MutexLock lock(&mutex_);
    target_ = target;
    connected = connected_;
  }
  if (connected) target->SetConnected();
}

void ShmMode::SetConnected() {
  std::shared_ptr<DirectTarget> target;
  {
    MutexLock lock(&mutex_);
    connected_ = true;
    target = target_;
  }
  if (target) target->SetConnected();
}

DirectStep ShmMode::TryExecute(const SendRequest& request, uint64_t sequence, Batching batching,
                               bool* tell_target) {
  ShmSegment* peer = direct_peer_.load(std::memory_order_acquire);
  if (peer == nullptr) return DirectStep::kDeclined;
  MutexLock lock(&mappings_mutex_);
  DirectStep step =
      ExecuteOnPeer(*peer, mappings_, request, sequence, batching, &deferred_, tell_target);
  deferred_count_.store(deferred_.size(), std::memory_order_release);
  return step;
}

std::vector<DeferredRequest> ShmMode::ExecuteDeferred(size_t* executed, bool* tell_target) {
  std::vector<DeferredRequest> requests;
  *executed = 0;
  *tell_target = false;
  ShmSegment* peer = direct_peer_.load(std::memory_order_acquire);
  MutexLock lock(&mappings_mutex_);
  requests.swap(deferred_);
  deferred_.reserve(ProcessVmBatch::kCopies);  // the next batch's, in one allocation
  deferred_count_.store(0, std::memory_order_release);
  // Revoked meanwhile (no peer): none executes here; the caller submits them all.
  if (peer != nullptr && !requests.empty())
    *executed = ExecuteBatchOnPeer(*peer, mappings_, requests, tell_target);
  return requests;
}

std::shared_ptr<ShmSegment> ShmMode::ReferencePeer() {
  std::shared_ptr<ShmSegment> segment;
  {
    MutexLock lock(&mutex_);
    segment = segment_;
  }
  // After the lock: it may probe the peer (a system call) the first time.
  return segment && segment->WeReachPeer() ? segment : nullptr;
}

bool ShmMode::PeerReachesUs() {
  MutexLock lock(&mutex_);
  return segment_ && segment_->PeerReachesUs();
}

std::shared_ptr<DirectTarget> ShmMode::target() {
  MutexLock lock(&mutex_);
  return target_;
}

void ShmMode::Revoke() {
  std::shared_ptr<ShmSegment> segment;
  std::shared_ptr<DirectTarget> target;
  {
    MutexLock lock(&mutex_);
    segment = segment_;
    target = target_;
  }
  direct_peer_.store(nullptr);
  // Both with no lock of this object held: closing waits for the peer's accesses to end.
  if (target) target->Close();
  if (segment) segment->RevokeReferences();
}

}  // namespace rpma_sim
