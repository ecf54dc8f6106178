// call_seam.h -- the seam every fallible public API call passes through first.
//
// Each of librpma's functions that returns an error code starts with the API layer's
// prologue (api/api_prologue.h), which asks the installed CallGate, if any, whether the call
// is to fail at once with an error instead of running: that is how fault injection makes
// rpma_mr_reg fail with RPMA_E_NOMEM on demand. A call failed there has no effect, except
// where librpma ends its object whatever the result (api/api_prologue.h).
#ifndef RPMA_SIM_COMMON_CALL_SEAM_H_
#define RPMA_SIM_COMMON_CALL_SEAM_H_

#include <memory>

#include "sim/common/gate_slot.h"
#include "sim/common/status.h"

namespace rpma_sim {

class CallGate {
 public:
  virtual ~CallGate() = default;

  // kOk to let the call of `function` (its C name, e.g. "rpma_mr_reg") run, or the status
  // it returns at once. Called on the application's thread, with no lock of the simulator
  // held.
  virtual Status Check(const char* function) = 0;
};

// While one lives on a thread, that thread's calls do not pass the seam: the API layer's own
// calls of public functions (an rpma_conn_req_delete inside rpma_conn_req_connect) are not
// the application's, and a rule neither counts nor fails them.
// (Its count is a thread_local of call_seam.cc, not a member: librpma.so exports no symbol of
// its own.)
class InternalCall {
 public:
  InternalCall();
  ~InternalCall();
  InternalCall(const InternalCall&) = delete;
  InternalCall& operator=(const InternalCall&) = delete;

  static bool active();
};

// The process's gate, or null for none (the default).
extern GateSlot<CallGate> g_call_gate_slot;
inline void SetCallGate(std::shared_ptr<CallGate> gate) { g_call_gate_slot.Set(std::move(gate)); }

// What the installed gate says of a call of `function`; kOk at once when none is installed
// or the call is internal (InternalCall).
Status CheckInstalledCallGate(const char* function);
inline Status CheckCall(const char* function) {
  if (!g_call_gate_slot.installed()) return Status::kOk;
  return CheckInstalledCallGate(function);
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_CALL_SEAM_H_
