// completion_queue.cc -- pushing, polling and arming a completion queue.
#include "sim/verbs/completion_queue.h"
#include "sim/common/mutex.h"

#include "sim/verbs/send_queue_slots.h"

namespace rpma_sim {

CompletionQueue::CompletionQueue(uint32_t depth, std::shared_ptr<CompletionChannel> channel)
    : depth_(depth), channel_(std::move(channel)) {}

CompletionQueue::~CompletionQueue() {
  if (channel_) channel_->Forget(this);
}

bool CompletionQueue::Push(const ibv_wc& wc, std::shared_ptr<SendQueueSlots> slots,
                           uint64_t sequence) {
  bool notify = false;
  bool fits;
  {
    MutexLock lock(&mutex_);
    fits = lost_ == 0 && entries_.size() < depth_;
    if (fits)
      entries_.push_back(Entry{wc, std::move(slots), sequence});
    else
      ++lost_;  // its send-queue slot is never given back: the queue pair is in error
    if (armed_) {
      armed_ = false;
      notify = true;
    }
  }
  if (notify && channel_) channel_->Notify(this);
  return fits;
}

int CompletionQueue::Poll(int max, ibv_wc* out) {
  std::shared_ptr<const Sources> sources;
  {
    MutexLock lock(&mutex_);
    int count = TakeLocked(max, out);
    if (count > 0) return count;
    if (lost_ > 0) return -1;
    if (!sources_) return 0;
    sources = sources_;
  }
  // Nothing yet: let the connections handle what already arrived, then look again.
  for (const auto& source : *sources)
    if (std::shared_ptr<ProgressSource> live = source.lock()) live->Progress();
  MutexLock lock(&mutex_);
  int count = TakeLocked(max, out);
  return count == 0 && lost_ > 0 ? -1 : count;
}

bool CompletionQueue::TakeOverflowReport() {
  MutexLock lock(&mutex_);
  if (lost_ == 0 || overflow_reported_) return false;
  overflow_reported_ = true;
  return true;
}

uint64_t CompletionQueue::lost() {
  MutexLock lock(&mutex_);
  return lost_;
}

void CompletionQueue::AddProgressSource(std::weak_ptr<ProgressSource> source) {
  MutexLock lock(&mutex_);
  auto sources = std::make_shared<Sources>();
  if (sources_)
    for (const auto& kept : *sources_)
      if (!kept.expired()) sources->push_back(kept);  // connections gone since are dropped
  sources->push_back(std::move(source));
  sources_ = std::move(sources);
}

int CompletionQueue::TakeLocked(int max, ibv_wc* out) {
  int count = 0;
  while (count < max && !entries_.empty()) {
    Entry& entry = entries_.front();
    out[count++] = entry.wc;
    if (entry.slots) entry.slots->RetireThrough(entry.sequence);
    entries_.pop_front();
  }
  return count;
}

void CompletionQueue::Arm() {
  std::shared_ptr<const Sources> sources;
  bool armed;
  {
    MutexLock lock(&mutex_);
    armed_ = lost_ == 0;
    armed = armed_;
    sources = sources_;
  }
  if (!armed) {
    if (channel_) channel_->Notify(this);
    return;
  }
  if (sources)
    for (const auto& source : *sources)
      if (std::shared_ptr<ProgressSource> live = source.lock()) live->OnArmed();
}

bool CompletionQueue::armed() {
  MutexLock lock(&mutex_);
  return armed_;
}

}  // namespace rpma_sim
