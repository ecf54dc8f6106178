// one_thread.h -- the objects librpma 1.3 lets one thread use at a time, and what the
// simulator does when a program breaks that.
//
// librpma's thread-safety contract: many threads may share a peer to make their own
// connections; the data-path and completion calls are thread-safe; but one thread at a time
// may use an endpoint (rpma_ep_next_conn_req), a connection request, and a configuration
// object (rpma_conn_cfg, rpma_peer_cfg), and no object may be deleted while another thread
// uses it. The simulator's own state is safe whatever a program does, but a program that
// breaks the contract may fail on real librpma, so the simulator says so:
//   - a call that enters such an object while another thread is in a call on it logs a
//     warning naming both calls, and goes on;
//   - a call that would end the object (delete it, or consume a request) while another
//     thread is still in a call on it logs an error naming both calls and fails with
//     RPMA_E_INVAL, leaving the object as it was (the caller may try again later).
// Only calls that overlap in time are seen: a call on an object another thread has already
// deleted is a use after free, as it is on librpma.
#ifndef RPMA_SIM_API_ONE_THREAD_H_
#define RPMA_SIM_API_ONE_THREAD_H_

#include <atomic>

// The base of a handle whose calls are counted. `what` names the object in log lines.
struct CountedCalls {
  mutable std::atomic<int> calls_in{0};
  mutable std::atomic<const char*> last_call{nullptr};  // the latest call to enter
};

// How a call may share its object with calls of other threads.
enum class Sharing {
  kAllowed,    // librpma allows it (rpma_conn_next_event beside rpma_conn_wait): counted only
  kOneThread,  // librpma allows one thread at a time: a warning if another call is in
};

// For the duration of one call on `object`.
class CallOn {
 public:
  CallOn(const CountedCalls& object, const char* call, const char* what, Sharing sharing);
  ~CallOn() { object_.calls_in.fetch_sub(1, std::memory_order_acq_rel); }

  CallOn(const CallOn&) = delete;
  CallOn& operator=(const CallOn&) = delete;

 private:
  const CountedCalls& object_;
};

// Whether `call` may end `object` (delete it or consume it) now: true when no call of
// another thread is in it (it stays counted as in use, as it is about to go); otherwise
// logs an error naming the call that is in and returns false.
bool MayEnd(const CountedCalls& object, const char* call, const char* what);

#endif  // RPMA_SIM_API_ONE_THREAD_H_
