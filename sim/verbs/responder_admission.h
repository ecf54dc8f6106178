// responder_admission.h -- the responder's end of a wire link: what it admits of its peer's
// REQUESTs. A peer that keeps RC order sends requests with ever larger sequences, and no
// more bytes unanswered than the window (request_window.h); one that does not, or that does
// not read its answers, loses the connection: this side keeps only what such a peer may
// have under way, never an unbounded queue. Thread-safe on its own (a leaf lock).
#ifndef RPMA_SIM_VERBS_RESPONDER_ADMISSION_H_
#define RPMA_SIM_VERBS_RESPONDER_ADMISSION_H_

#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <string>
#include <utility>

#include "sim/common/mutex.h"

namespace rpma_sim {

class ResponderAdmission {
 public:
  ResponderAdmission() = default;
  ResponderAdmission(const ResponderAdmission&) = delete;
  ResponderAdmission& operator=(const ResponderAdmission&) = delete;

  // Whether the peer's request `sequence` of `window_bytes` may be taken: in sequence, and
  // within the window, counting the answers among the `queued_bytes` its wire still holds
  // for the peer beyond this side's own requests (`own_under_way` bytes). Counts it as
  // unanswered if so; otherwise says why in *error.
  bool Admit(uint64_t sequence, uint64_t window_bytes, size_t queued_bytes, uint64_t own_under_way,
             std::string* error);

  // `sequence` and the requests before it are answered: the peer may send as much again.
  void Answered(uint64_t sequence);

 private:
  Mutex mutex_;
  uint64_t next_sequence_ GUARDED_BY(mutex_) = 0;  // the least a REQUEST may carry
  // The peer's requests not answered yet (sequence, window bytes), in order, and their sum.
  std::deque<std::pair<uint64_t, uint64_t>> unanswered_ GUARDED_BY(mutex_);
  uint64_t unanswered_bytes_ GUARDED_BY(mutex_) = 0;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_RESPONDER_ADMISSION_H_
