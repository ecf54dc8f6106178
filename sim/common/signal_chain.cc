// signal_chain.cc -- installing the simulator's signal handlers and chaining past them.
#include "sim/common/signal_chain.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
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
  const bool has_handler = (previous.sa_flags & SA_SIGINFO)
                               ? previous.sa_sigaction != nullptr
                               : previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN;
  if (has_handler) {
    // The mask the kernel would have given the handler had it been called directly: its
    // sa_mask, and the signal itself unless SA_NODEFER. A handler that longjmps out (a
    // probe of memory, say) then leaves the mask as it expects.
    sigset_t ours;
    sigset_t theirs;
    pthread_sigmask(SIG_SETMASK, nullptr, &ours);
    theirs = ours;
    for (int other = 1; other < NSIG; ++other)
      if (sigismember(&previous.sa_mask, other) == 1) sigaddset(&theirs, other);
    if (previous.sa_flags & SA_NODEFER)
      sigdelset(&theirs, signal);
    else
      sigaddset(&theirs, signal);
    pthread_sigmask(SIG_SETMASK, &theirs, nullptr);
    if (previous.sa_flags & SA_SIGINFO)
      previous.sa_sigaction(signal, info, context);
    else
      previous.sa_handler(signal);
    pthread_sigmask(SIG_SETMASK, &ours, nullptr);
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
