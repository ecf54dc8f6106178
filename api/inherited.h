// inherited.h -- handles that a fork() child inherited from its parent.
//
// Every handle on simulator state (a peer, a registered region, an endpoint, a connection
// request, a connection, a completion queue, a shared receive queue) remembers the fork
// generation that made it (sim/common/fork_generation.h). In a child, its parent's handles
// are the parent's: the simulator behind them (their connections, queues and memory tables,
// and the locks of the threads the child does not have) is never touched there. A call
// that would act through one fails: RPMA_E_PROVIDER (the provider refuses it), or
// RPMA_E_INVAL from the fd getters, which document nothing else; a delete lets go of the
// child's handle (*ptr becomes NULL) without touching the parent's object and says
// RPMA_E_PROVIDER. What a handle holds by value (pointers, sizes, descriptors, private
// data, the queue pair's number) can still be read. Each refusal is logged with the call.
#ifndef RPMA_SIM_API_INHERITED_H_
#define RPMA_SIM_API_INHERITED_H_

#include <stdint.h>

#include "sim/common/fork_generation.h"

// The base of every handle on simulator state.
struct ProcessOwned {
  uint32_t fork_generation = rpma_sim::ForkGeneration();
};

// Logs that `call` cannot use the parent's `what`, and returns true.
bool NoteInherited(const char* call, const char* what);

// True if `handle` was made before this process was forked from the one that made it, i.e.
// it is a parent's; then logs that `call` cannot use this `what`. One atomic load otherwise.
inline bool Inherited(const ProcessOwned& handle, const char* call, const char* what) {
  return handle.fork_generation != rpma_sim::ForkGeneration() && NoteInherited(call, what);
}

// Keeps a parent's handle that the child let go of (a delete, a consumed request): never
// destroyed in the child, and reachable, so that leak checkers do not report it.
void KeepInherited(const ProcessOwned* handle);

#endif  // RPMA_SIM_API_INHERITED_H_
