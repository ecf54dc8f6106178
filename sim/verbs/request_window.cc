// request_window.cc -- the requester's window of REQUESTs under way.
#include "sim/verbs/request_window.h"

#include "sim/verbs/region_payload.h"

namespace rpma_sim {

std::optional<EncodedRequest> RequestWindow::Submit(EncodedRequest request) {
  MutexLock lock(&mutex_);
  // Sent or waiting, it is under way: a later request may not overtake it (Idle).
  unanswered_.fetch_add(1, std::memory_order_relaxed);
  if (request.payload) in_place_.emplace_back(request.sequence, request.payload);
  if (!waiting_.empty() || !FitsWindow(bytes_under_way_, request.window_bytes)) {
    waiting_.push_back(std::move(request));
    return std::nullopt;
  }
  SentLocked(request);
  return request;
}

void RequestWindow::SentLocked(const EncodedRequest& request) {
  sent_.push_back(Sent{request.sequence, request.window_bytes, request.read_back});
  bytes_under_way_ += request.window_bytes;
}

bool RequestWindow::TakeResponse(uint64_t sequence, bool* read_back) {
  MutexLock lock(&mutex_);
  // RC: the answers come in the order the requests were sent, one each.
  if (unanswered_.load(std::memory_order_relaxed) == 0 || sent_.empty() ||
      sent_.front().sequence != sequence)
    return false;
  unanswered_.fetch_sub(1, std::memory_order_release);
  bytes_under_way_ -= sent_.front().window_bytes;
  if (read_back != nullptr) *read_back = sent_.front().read_back;
  sent_.pop_front();
  while (!in_place_.empty() && in_place_.front().first <= sequence) in_place_.pop_front();
  return true;
}

std::vector<EncodedRequest> RequestWindow::TakeFitting() {
  MutexLock lock(&mutex_);
  std::vector<EncodedRequest> fitting;
  while (!waiting_.empty() && FitsWindow(bytes_under_way_, waiting_.front().window_bytes)) {
    SentLocked(waiting_.front());
    fitting.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  return fitting;
}

uint64_t RequestWindow::BytesUnderWay() {
  MutexLock lock(&mutex_);
  return bytes_under_way_;
}

void RequestWindow::Revoke() {
  MutexLock lock(&mutex_);
  waiting_.clear();
  for (auto& sent : in_place_) sent.second->Revoke();
  in_place_.clear();
}

}  // namespace rpma_sim
