// queue_pair.cc -- creation, state transitions and receive posting of a queue pair.
#include "sim/verbs/queue_pair.h"

#include <algorithm>
#include <atomic>

#include "sim/common/log.h"
#include "sim/fabric/io_service.h"
#include "sim/verbs/inproc_link.h"

namespace rpma_sim {
namespace {

uint32_t NextQueuePairNumber() {
  static std::atomic<uint32_t> next{0x11};
  return next.fetch_add(1);
}

}  // namespace

QueuePair::QueuePair(std::shared_ptr<ProtectionDomain> pd, QueuePairConfig config)
    : pd_(std::move(pd)),
      config_(std::move(config)),
      qp_num_(NextQueuePairNumber()),
      native_flush_(pd_->caps().native_flush),
      native_atomic_write_(pd_->caps().native_atomic_write),
      receives_(config_.rq_size),
      send_slots_(std::make_shared<SendQueueSlots>(config_.sq_size)),
      first_domain_(config_.srq ? config_.srq->domain() : std::make_shared<ExecutionDomain>()),
      domain_(first_domain_),
      domain_seen_(first_domain_.get()) {
  pd_->AddUser();
}

QueuePair::~QueuePair() { Destroy(); }

ExecutionLock QueuePair::LockExecution() {
  for (;;) {
    ExecutionDomain* own = domain_seen_.load(std::memory_order_acquire);
    ExecutionDomain* peer = peer_domain_seen_.load(std::memory_order_acquire);
    ExecutionLock lock(own, peer);
    // They change only under the locks held now, if these are still the ones.
    if (domain_seen_.load(std::memory_order_relaxed) == own &&
        peer_domain_seen_.load(std::memory_order_relaxed) == peer)
      return lock;
  }
}

void QueuePair::RunDeferred() {
  ExecutionScope lock(this);
  if (std::shared_ptr<RemoteLink> link = link_) link->RunDeferredLocked();
}

bool QueuePair::TryRunExecuting(const std::function<void()>& body) {
  SendBatch batch;  // closed after the locks are given back, as ExecutionScope's
  ExecutionDomain* own = domain_seen_.load(std::memory_order_acquire);
  ExecutionDomain* peer = peer_domain_seen_.load(std::memory_order_acquire);
  ExecutionLock lock(own, peer, std::try_to_lock);
  // The domains change only under the locks: if they did meanwhile, another thread had them.
  if (!lock.owns() || domain_seen_.load(std::memory_order_relaxed) != own ||
      peer_domain_seen_.load(std::memory_order_relaxed) != peer)
    return false;
  body();
  return true;
}

void QueuePair::Destroy() {
  ExecutionScope lock(this);
  EnterErrorLocked();
  if (destroyed_) return;
  destroyed_ = true;
  pd_->RemoveUser();
}

bool QueuePair::destroyed() {
  ExecutionScope lock(this);
  return destroyed_;
}

void QueuePair::AttachToSharedReceiveQueue() {
  if (config_.srq) config_.srq->Attach(shared_from_this());
}

QueuePair::State QueuePair::state() {
  ExecutionScope lock(this);
  return state_;
}

Status QueuePair::PostReceive(const ReceiveRequest& request) {
  if (config_.srq) {
    SIM_LOG_ERROR("ibv_post_recv: the queue pair uses a shared receive queue");
    return Status::kProvider;
  }
  ExecutionScope lock(this);
  if (state_ == State::kError) {
    CompleteReceiveLocked(request, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, nullptr);
    return Status::kOk;
  }
  Status status = receives_.Post(request);
  if (status != Status::kOk) {
    SIM_LOG_ERROR("ibv_post_recv: the receive queue is full");
    return status;
  }
  ReceivePostedLocked();
  return Status::kOk;
}

void QueuePair::AddProgressSource(const std::weak_ptr<ProgressSource>& source) {
  CompletionQueue* cqs[] = {config_.send_cq.get(), config_.recv_cq.get(),
                            config_.srq ? config_.srq->rcq().get() : nullptr};
  for (size_t i = 0; i < 3; ++i) {
    bool seen = cqs[i] == nullptr || std::find(cqs, cqs + i, cqs[i]) != cqs + i;
    if (!seen) cqs[i]->AddProgressSource(source);
  }
}

void QueuePair::Connect(std::shared_ptr<RemoteLink> link) {
  ExecutionScope lock(this);
  if (state_ != State::kInit) return;
  link_ = std::move(link);
  state_ = State::kReadyToSend;
  link_->ConnectedLocked();
}

void QueuePair::ConnectInProcess(const std::shared_ptr<QueuePair>& a,
                                 const std::shared_ptr<QueuePair>& b) {
  // Neither is connected yet, so neither has a peer's lock to take.
  ExecutionScope lock(a.get(), b.get());
  if (a->state_ == State::kInit && b->state_ == State::kInit && !a->config_.srq &&
      !b->config_.srq) {
    // One lock for the pair: b moves to a's domain.
    b->domain_ = a->domain_;
    b->domain_seen_.store(a->domain_.get(), std::memory_order_release);
  } else {
    a->peer_domain_ = b->domain_;
    b->peer_domain_ = a->domain_;
    a->peer_domain_seen_.store(b->domain_.get(), std::memory_order_release);
    b->peer_domain_seen_.store(a->domain_.get(), std::memory_order_release);
  }
  a->BecomeReadyInProcessLocked(b.get());
  b->BecomeReadyInProcessLocked(a.get());
}

void QueuePair::BecomeReadyInProcessLocked(QueuePair* other) {
  if (state_ != State::kInit) return;  // destroyed or failed meanwhile
  link_ = std::make_shared<InprocLink>(shared_from_this(), other->shared_from_this());
  state_ = State::kReadyToSend;
}

void QueuePair::SetTag(ConnectionTag tag) {
  ExecutionScope lock(this);
  tag_ = std::move(tag);
  WorkRequestTrace::NameConnection(qp_num_, tag_);
  pd_->persistence().NamePlacer(qp_num_, tag_.side == ConnectionSide::kServer);
}

void QueuePair::EnterError(ibv_wc_status first) {
  ExecutionScope lock(this);
  EnterErrorLocked(first);
}

void QueuePair::ReceivePosted() {
  ExecutionScope lock(this);
  ReceivePostedLocked();
}

void QueuePair::CompletionLostLocked(const CompletionQueue& cq) {
  if (completion_lost_) return;  // once: every later completion of it is lost too
  completion_lost_ = true;
  std::weak_ptr<QueuePair> self = weak_from_this();  // empty while it is being destroyed
  std::weak_ptr<NodeMember> connection = tag_.connection;
  uint32_t depth = cq.depth();
  uint32_t qp_num = qp_num_;
  RunAt(std::chrono::steady_clock::now(), [self, connection, depth, qp_num] {
    SIM_LOG_ERROR(
        "a completion queue of depth %u overflowed (IBV_EVENT_CQ_ERR): queue pair "
        "%u goes to error and its connection is lost",
        depth, qp_num);
    if (std::shared_ptr<QueuePair> qp = self.lock()) qp->EnterError();
    if (std::shared_ptr<NodeMember> member = connection.lock()) member->OnNodeFailed();
  });
}

void QueuePair::EnterErrorLocked(ibv_wc_status first) {
  if (state_ == State::kError) return;
  // What the link kept to execute with others was posted before the error: it executes
  // (or is submitted) as it would have at its post.
  if (std::shared_ptr<RemoteLink> link = link_) link->RunDeferredLocked();
  if (state_ == State::kError) return;  // one of them failed meanwhile
  state_ = State::kError;
  // The responder may still be working through requests it received: from now on it must
  // leave this side's buffers alone, since they are reported done below. And the remote
  // places nothing here by itself any more (what it did place is told to the persistence
  // model now, before the report).
  if (link_) link_->RevokeLocked();
  link_.reset();
  // The connection is over for what it placed here: the report names what it never made
  // durable.
  pd_->persistence().EndPlacer(qp_num_, tag_.ordinal == 0
                                            ? "queue pair " + std::to_string(qp_num_)
                                            : std::string(SideName(tag_.side)) + " connection " +
                                                  std::to_string(tag_.ordinal));
  // Whatever waits at a stage is outstanding like the rest, and flushed with it.
  unsubmitted_ = 0;
  failing_locally_ = false;
  answered_.clear();
  for (std::shared_ptr<StageHold>& hold : holds_) hold.reset();
  ibv_wc_status status = first;
  while (!in_flight_.empty()) {
    InFlight flushed = std::move(in_flight_.front());
    in_flight_.pop_front();
    CompleteSendLocked(flushed.request, flushed.sequence, status);
    status = IBV_WC_WR_FLUSH_ERR;
  }
  // The remote's requests that waited here for a receive: their requester flushes them.
  while (!inbound_.empty()) {
    InboundRequest waiting = std::move(inbound_.front());
    inbound_.pop_front();
    waiting.reply->RespondLocked(waiting.sequence, Outcome{IBV_WC_WR_FLUSH_ERR}, nullptr, 0);
  }
  for (const ReceiveRequest& request : receives_.TakeAll())
    CompleteReceiveLocked(request, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, nullptr);
}

}  // namespace rpma_sim
