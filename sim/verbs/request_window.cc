// request_window.cc -- the requester's window of REQUESTs under way, and the responder's
// holding its peer to RC order and the window.
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

bool RequestWindow::TakeResponses(uint64_t sequence, uint32_t count, Answered* answered) {
  MutexLock lock(&mutex_);
  // RC: the answers come in the order the requests were sent, each answered once.
  if (count == 0 || count > kMaxAnsweredTogether || sent_.size() < count ||
      sent_[count - 1].sequence != sequence)
    return false;
  unanswered_.fetch_sub(count, std::memory_order_release);
  for (uint32_t i = 0; i < count; ++i) {
    const Sent& sent = sent_.front();
    bytes_under_way_ -= sent.window_bytes;
    if (answered != nullptr) answered[i] = Answered{sent.sequence, sent.read_back};
    sent_.pop_front();
  }
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

// ---------------------------------------------------------------------------------------------
// ResponderAdmission
namespace {

// What a wire may queue besides requests and answers: connection management (HELLO,
// ACCEPT, DISCONNECT; each far smaller).
constexpr uint64_t kConnectionFramesSlack = 64 << 10;

}  // namespace

bool ResponderAdmission::Admit(uint64_t sequence, uint64_t window_bytes, size_t queued_bytes,
                               uint64_t own_under_way, std::string* error) {
  MutexLock lock(&mutex_);
  // The last sequence there is would leave no next one: no send queue gets there.
  if (sequence < next_sequence_ || sequence == UINT64_MAX) {
    *error = "a request out of sequence (RC order)";
    return false;
  }
  if (!FitsWindow(unanswered_bytes_, window_bytes)) {
    *error = "more bytes under way than the window (" + std::to_string(kWindowBytes >> 20) +
             " MiB) allows";
    return false;
  }
  // The answers still queued for the peer are under way for it too: the queue holds at
  // least them beyond this side's own requests (which hold no more than their window
  // bytes) and a few connection-management frames.
  const uint64_t own = own_under_way + kConnectionFramesSlack;
  const uint64_t answers_queued = queued_bytes > own ? queued_bytes - own : 0;
  if (answers_queued > 0 && !FitsWindow(unanswered_bytes_ + answers_queued, window_bytes)) {
    *error = "a peer that does not read its answers";
    return false;
  }
  next_sequence_ = sequence + 1;
  unanswered_.emplace_back(sequence, window_bytes);
  unanswered_bytes_ += window_bytes;
  return true;
}

void ResponderAdmission::Answered(uint64_t sequence) {
  MutexLock lock(&mutex_);
  while (!unanswered_.empty() && unanswered_.front().first <= sequence) {
    unanswered_bytes_ -= unanswered_.front().second;
    unanswered_.pop_front();
  }
}

}  // namespace rpma_sim
