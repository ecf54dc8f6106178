// event_channel.cc -- the event queue behind a CM event channel's fd.
#include "sim/cm/event_channel.h"
#include "sim/common/mutex.h"

#include "sim/cm/cm_id.h"

namespace rpma_sim {

namespace {

// Constant-initialized, trivially destroyed: there before any channel, and after the last.
SpinBudget g_cm_event_spin;

}  // namespace

SpinBudget& EventChannel::CmEventSpin() { return g_cm_event_spin; }

void EventChannel::Push(CmEvent event) {
  {
    MutexLock lock(&mutex_);
    events_.push_back(std::move(event));
  }
  // After the unlock, so that the woken taker does not block on mutex_ at once; a count
  // whose event TakeAll took meanwhile is skipped by Next.
  event_fd_.Signal();
}

Status EventChannel::Next(CmEvent* event) {
  for (;;) {
    switch (event_fd_.Take()) {
      case EventFd::Taken::kYes:
        break;
      case EventFd::Taken::kNothing:
        return Status::kNoEvent;
      case EventFd::Taken::kInterrupted:
        return Status::kProvider;  // rdma_get_cm_event fails with EINTR, not ENODATA
    }
    MutexLock lock(&mutex_);
    if (events_.empty()) continue;  // taken by TakeAll meanwhile
    *event = std::move(events_.front());
    events_.pop_front();
    return Status::kOk;
  }
}

size_t EventChannel::pending() {
  MutexLock lock(&mutex_);
  return events_.size();
}

std::deque<CmEvent> EventChannel::TakeAll() {
  MutexLock lock(&mutex_);
  std::deque<CmEvent> all;
  all.swap(events_);
  // Nothing is pending any more: the fd must not look readable. Under this leaf lock, so
  // that an event pushed meanwhile keeps its count (the reads cannot block).
  event_fd_.Drain();
  return all;
}

}  // namespace rpma_sim
