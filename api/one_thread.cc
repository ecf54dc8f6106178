// one_thread.cc -- counting the calls on objects librpma lets one thread use at a time.
#include "api/one_thread.h"

#include "sim/common/log.h"

CallOn::CallOn(const CountedCalls& object, const char* call, const char* what, Sharing sharing)
    : object_(object) {
  const int others = object.calls_in.fetch_add(1, std::memory_order_acq_rel);
  const char* other = object.last_call.exchange(call, std::memory_order_acq_rel);
  if (others != 0 && sharing == Sharing::kOneThread) {
    SIM_LOG_WARNING(
        "%s: another thread is in %s on the same %s; librpma lets one thread at a "
        "time use a %s (its thread-safety rules), so this may fail on real RDMA",
        call, other != nullptr ? other : "a call", what, what);
  }
}

bool MayEnd(const CountedCalls& object, const char* call, const char* what) {
  int none = 0;
  if (object.calls_in.compare_exchange_strong(none, 1, std::memory_order_acq_rel)) {
    object.last_call.store(call, std::memory_order_release);
    return true;
  }
  const char* other = object.last_call.load(std::memory_order_acquire);
  SIM_LOG_ERROR(
      "%s: another thread is still in %s on this %s; it is not ended (RPMA_E_INVAL): "
      "librpma does not allow ending an object another thread uses",
      call, other != nullptr ? other : "a call", what);
  return false;
}
