// signal_chain.h -- passing a signal the simulator's handler does not claim on to whoever
// handled it before (a SIGBUS of a mapping nobody guards, a SIGSEGV outside pages being
// moved), or to the default action.
#ifndef RPMA_SIM_COMMON_SIGNAL_CHAIN_H_
#define RPMA_SIM_COMMON_SIGNAL_CHAIN_H_

#include <signal.h>

namespace rpma_sim {

// Installs `handler` (SA_SIGINFO | SA_ONSTACK) for `signal`, saving the one it replaces in
// *previous. False (and a warning naming `what`) if the kernel refuses.
bool InstallSignalHandler(int signal, void (*handler)(int, siginfo_t*, void*),
                          struct sigaction* previous, const char* what);

// From inside a handler: calls `previous` as it was installed, with the signal mask its
// sa_mask and SA_NODEFER would have given it (SA_RESETHAND is not emulated); for the default
// action, restores it and raises the signal again, so that the process ends of it as it would have
// without the simulator (a signal sent with kill too). Async-signal-safe; keeps errno.
void PassToPreviousHandler(int signal, siginfo_t* info, void* context,
                           const struct sigaction& previous);

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_SIGNAL_CHAIN_H_
