// process_gone.h -- whether another process of this host has ended, for a wait on accesses
// it announced in shared memory: an access of a process that ended ended with it.
#ifndef RPMA_SIM_TRANSPORT_PROCESS_GONE_H_
#define RPMA_SIM_TRANSPORT_PROCESS_GONE_H_

namespace rpma_sim {

// True if process `pid` has ended: exited or killed, reaped or not (a zombie runs no more
// code). False while it runs or is stopped, for 0 (no such process known), and where the
// kernel cannot tell (then a wait runs to its bound, as without this check). A pid reused
// by a new process reads as running.
bool ProcessGone(int pid);

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_PROCESS_GONE_H_
