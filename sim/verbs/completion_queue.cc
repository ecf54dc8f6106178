// completion_queue.cc -- pushing, polling and arming a completion queue.
#include "sim/verbs/completion_queue.h"

#include <algorithm>

#include "sim/verbs/send_queue_slots.h"

namespace rpma_sim {

CompletionQueue::CompletionQueue(uint32_t depth, std::shared_ptr<CompletionChannel> channel)
    : depth_(depth), channel_(std::move(channel)) {}

CompletionQueue::~CompletionQueue() {
  if (channel_) channel_->Forget(this);
}

void CompletionQueue::Push(const ibv_wc& wc, std::shared_ptr<SendQueueSlots> slots,
                           uint64_t sequence) {
  bool notify = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back(Entry{wc, std::move(slots), sequence});
    if (armed_) {
      armed_ = false;
      notify = true;
    }
  }
  if (notify && channel_) channel_->Notify(this);
}

int CompletionQueue::Poll(int max, ibv_wc* out) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int count = TakeLocked(max, out);
    if (count > 0 || !has_sources_) return count;
  }
  Progress();
  std::lock_guard<std::mutex> lock(mutex_);
  return TakeLocked(max, out);
}

void CompletionQueue::AddProgressSource(std::weak_ptr<ProgressSource> source) {
  std::lock_guard<std::mutex> lock(mutex_);
  sources_.push_back(std::move(source));
  has_sources_ = true;
}

void CompletionQueue::Progress() {
  std::vector<std::shared_ptr<ProgressSource>> live;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto expired = [](const std::weak_ptr<ProgressSource>& s) { return s.expired(); };
    sources_.erase(std::remove_if(sources_.begin(), sources_.end(), expired), sources_.end());
    has_sources_ = !sources_.empty();
    for (const auto& source : sources_)
      if (auto locked = source.lock()) live.push_back(std::move(locked));
  }
  for (const auto& source : live) source->Progress();
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
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = true;
}

}  // namespace rpma_sim
