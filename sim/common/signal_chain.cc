// signal_chain.cc -- installing the simulator's signal handlers and chaining past them.
#include "sim/common/signal_chain.h"

#include <errno.h>
#include <string.h>

#include "sim/common/log.h"

namespace rpma_sim {

bool InstallSignalHandler(int signal, void (*handler)(int, siginfo_t*, void*),
                          struct sigaction* previous, const char* what) {
  struct sigaction action;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  action.sa_sigaction = handler;
  if (sigaction(signal, &action, previous) == 0) return true;
  SIM_LOG_WARNING("cannot install the %s handler of %s", strsignal(signal), what);
  return false;
}

void PassToPreviousHandler(int signal, siginfo_t* info, void* context,
                           const struct sigaction& previous) {
  const int saved_errno = errno;
  if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
  } else if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler != SIG_DFL &&
             previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
  } else {
    // The default (or ignored, which a fault cannot be): the process dies of it, as without
    // the simulator's handler. Raised now, pending until the handler returns, so that a
    // signal sent with kill does too.
    struct sigaction fallback;
    sigemptyset(&fallback.sa_mask);
    fallback.sa_flags = 0;
    fallback.sa_handler = SIG_DFL;
    sigaction(signal, &fallback, nullptr);
    raise(signal);
  }
  errno = saved_errno;
}

}  // namespace rpma_sim
