// wire_threads.h -- the threads that wires run on: started here, joined once they end, and
// at process exit every one still running is told to stop and joined.
//
// A thread that outlives main() is killed in the middle of whatever it does, runs beside
// the static destructors, and shows in valgrind as "possibly lost" stacks. So every wire
// thread is tracked: a finished one is joined by the next start (the list stays as long as
// the live threads), and an exit handler, registered after the progress engine's so it runs
// before it, calls each live thread's stop function and joins them all (waiting at most a
// bound, so a stuck thread cannot hang the exit; it is then logged and left).
#ifndef RPMA_SIM_TRANSPORT_WIRE_THREADS_H_
#define RPMA_SIM_TRANSPORT_WIRE_THREADS_H_

#include <functional>

namespace rpma_sim {

// Runs `body` on a new thread. `stop` must make `body` return soon; the exit handler calls
// it for a thread that had not ended when the process began to exit (so possibly just after
// `body` returned: it must be harmless then).
void StartWireThread(std::function<void()> body, std::function<void()> stop);

// How many wire threads have been started and not yet joined (for tests).
int WireThreadCount();

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_WIRE_THREADS_H_
