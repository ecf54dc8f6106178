// responder_admission.cc -- holding a peer's REQUESTs to RC order and the window.
#include "sim/verbs/responder_admission.h"

#include "sim/verbs/request_window.h"

namespace rpma_sim {
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
