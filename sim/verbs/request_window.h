// request_window.h -- the REQUESTs under way on a wire link, from both ends: the
// requester's (RequestWindow: its requests under way at the responder, the window they keep
// to, the ones waiting for room, and which RESPONSE a peer that keeps RC order may send) and
// the responder's (ResponderAdmission: what it takes of its peer's requests).
//
// The window (PROTOCOL.md): the bytes a requester may have under way at its responder, what
// its REQUEST frames' bodies hold and what a read's RESPONSE carries back, for the requests
// not answered yet. A request that does not fit waits here (as a NIC's send queue keeps its
// requests in the application's memory until the responder can take them); one alone may
// exceed it. The responder holds its peer to it (ResponderAdmission).
//
// Each is thread-safe on its own (its mutex is a leaf among the link's). The order of the
// frames on the wire is the queue pair's execution lock's business: every caller holds it,
// and sends what a call returns before it lets it go.
#ifndef RPMA_SIM_VERBS_REQUEST_WINDOW_H_
#define RPMA_SIM_VERBS_REQUEST_WINDOW_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/common/mutex.h"
#include "sim/verbs/wire_codec.h"

namespace rpma_sim {

constexpr uint64_t kWindowBytes = 64 << 20;

// Whether a request of `bytes` may join `under_way` bytes at the responder.
inline bool FitsWindow(uint64_t under_way, uint64_t bytes) {
  return under_way == 0 || under_way + bytes <= kWindowBytes;
}

class RequestWindow {
 public:
  RequestWindow() = default;
  RequestWindow(const RequestWindow&) = delete;
  RequestWindow& operator=(const RequestWindow&) = delete;

  // Whether nothing submitted is still under way: a later request may then execute
  // directly without overtaking one (RC order).
  bool Idle() const { return unanswered_.load(std::memory_order_acquire) == 0; }
  // How many requests are under way (submitted, not answered).
  uint64_t Unanswered() const { return unanswered_.load(std::memory_order_relaxed); }

  // `request` is under way from now on. Returns it if it is to be sent now (the caller
  // sends it), or keeps it until the window has room (TakeFitting).
  std::optional<EncodedRequest> Submit(EncodedRequest request);

  // A request a RESPONSE answered, and whether its RESPONSE must carry bytes
  // (EncodedRequest::read_back).
  struct Answered {
    uint64_t sequence;
    bool read_back;
  };

  // A RESPONSE that answers `count` requests (1 to kMaxAnsweredTogether), the last of them
  // `sequence`, arrived: true if those are the first `count` sent and not answered (then
  // they are answered: answered[0 .. count), in order, if `answered` is not null); false if
  // no RC peer would send it.
  bool TakeResponses(uint64_t sequence, uint32_t count, Answered* answered);
  // The same for a RESPONSE that answers one.
  bool TakeResponse(uint64_t sequence, bool* read_back = nullptr) {
    Answered answered;
    if (!TakeResponses(sequence, 1, &answered)) return false;
    if (read_back != nullptr) *read_back = answered.read_back;
    return true;
  }

  // The requests that waited and fit now, in order, counted as sent (the caller sends them).
  std::vector<EncodedRequest> TakeFitting();

  // The bytes of this side's requests under way (which its wire's queue may hold).
  uint64_t BytesUnderWay();

  // The connection failed: the waiting requests never leave, and the buffers of those
  // whose bytes the wire reads in place are read no more (the application may free them).
  void Revoke();

 private:
  // Counts `request` as sent.
  void SentLocked(const EncodedRequest& request) REQUIRES(mutex_);

  Mutex mutex_;
  // REQUEST frames submitted and not answered by a RESPONSE taken: while not 0, a request
  // is under way at the responder. Changed under mutex_; Idle reads it without (a direct
  // execution asks on every request, and only its own requester adds to it).
  std::atomic<uint64_t> unanswered_{0};
  // Each REQUEST sent and not answered, in order (the next RESPONSE answers the first), and
  // the sum of their window bytes; then the requests that wait for room.
  struct Sent {
    uint64_t sequence;
    uint64_t window_bytes;
    bool read_back;
  };
  std::deque<Sent> sent_ GUARDED_BY(mutex_);
  uint64_t bytes_under_way_ GUARDED_BY(mutex_) = 0;
  std::deque<EncodedRequest> waiting_ GUARDED_BY(mutex_);
  // The requests sent or waiting whose bytes the wire reads from the requester's memory,
  // in order, until answered.
  std::deque<std::pair<uint64_t, std::shared_ptr<RegionPayload>>> in_place_ GUARDED_BY(mutex_);
};

// The responder's end: what it admits of its peer's REQUESTs. A peer that keeps RC order
// sends requests with ever larger sequences, and no more bytes unanswered than the window;
// one that does not, or that does not read its answers, loses the connection: this side
// keeps only what such a peer may have under way, never an unbounded queue.
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

#endif  // RPMA_SIM_VERBS_REQUEST_WINDOW_H_
