// fork_support.h -- the two halves of a fork test: what a child made by fork() does (with
// nothing but <librpma.h> and POSIX: no gtest in the child), and the parent's side of the
// connection the child makes.
//
// Every child helper returns an Outcome: "" when all went as expected, otherwise what went
// wrong first (the call, what it returned, what was expected).
#ifndef RPMA_SIM_TESTS_INTEGRATION_FORK_SUPPORT_H_
#define RPMA_SIM_TESTS_INTEGRATION_FORK_SUPPORT_H_

#include <librpma.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

namespace forktest {

using Outcome = std::string;

// The size of the region a server offers its clients, and of each client's slot in it.
constexpr size_t kRegionSize = 4096;
constexpr size_t kSlotSize = 64;

// What a parent had made when it forked, for the child to try (any may be NULL).
struct ParentHandles {
  rpma_peer* peer = nullptr;
  rpma_ep* ep = nullptr;
  rpma_conn* conn = nullptr;  // an established connection of the parent's
  rpma_mr_local* mr = nullptr;
};

// In the child: every call that would act through a parent's handle fails with the code
// librpma documents for it (RPMA_E_PROVIDER, or RPMA_E_INVAL from the fd getters), what a
// handle holds by value still reads, and each delete lets go of the handle (NULL) with
// RPMA_E_PROVIDER. Every non-NULL member of `handles` is NULL afterwards.
Outcome ExpectInheritedRefused(ParentHandles* handles);

// In the child, before it uses the simulator: it holds no socket and maps no connection
// segment of its parent's (they were closed and unmapped as fork returned).
Outcome ExpectNothingOfTheParentsOpen();

// A client of its own (a new peer) connects to 127.0.0.1:port, where the server offers its
// region's descriptor as private data; writes kSlotSize bytes of `pattern` into the slot
// at `slot`, reads them back and compares; then disconnects (CLOSED) and deletes
// everything. With `expect_rejected` the connect must end RPMA_CONN_REJECTED instead.
Outcome ConnectAndWrite(const std::string& port, uint8_t pattern, size_t slot,
                        bool expect_rejected);

// ConnectAndWrite's client connected and left established (for tests that end it another
// way); *peer and *conn are the caller's to delete.
Outcome ConnectOnly(const std::string& port, rpma_peer** peer, rpma_conn** conn);

// A peer, a listener and a client of this process, connected; the client writes and reads
// back as ConnectAndWrite does; all of it deleted again.
Outcome InProcessExchange();

// The connection's next event (waiting at most the safety timeout) is `expected`.
Outcome ExpectEvent(rpma_conn* conn, rpma_conn_event expected);

// Over the established `conn` of `peer`, whose server offered its region's descriptor as
// private data: kSlotSize bytes of `pattern` written into slot `slot`, read back, compared.
Outcome WriteAndReadBack(rpma_peer* peer, rpma_conn* conn, uint8_t pattern, size_t slot);

// Disconnects `*conn`, waits for its CLOSED and deletes it.
Outcome DisconnectAndDelete(rpma_conn** conn);

// Takes the next connection request on `ep` (waiting at most the safety timeout) and
// accepts it offering `mr`'s descriptor; waits for ESTABLISHED.
Outcome Accept(rpma_ep* ep, rpma_mr_local* mr, rpma_conn** conn);

// The server's side of ConnectAndWrite: takes the next request on `ep` (waiting at most the
// safety timeout), accepts it offering `mr`'s descriptor, and waits for ESTABLISHED and then
// for the client's CLOSED; deletes the connection.
Outcome ServeOneClient(rpma_ep* ep, rpma_mr_local* mr);

// Runs `child` in a child made by fork() (its Outcome is written to a pipe, then the child
// exits with exit(0): atexit handlers and leak checks run) and returns the pid, with
// *outcome_fd the pipe's reading end; -1 if fork failed.
template <typename Child>
int ForkChild(int* outcome_fd, Child child);

// The Outcome a child wrote on `fd` (waiting at most `timeout_ms`), and its exit reaped:
// "the child said nothing" or "the child exited with status N" when it did not end well.
Outcome ChildOutcome(int pid, int fd, int timeout_ms);

// Writes `outcome` and a newline to `fd` (the child's end of the pipe).
void SayOutcome(int fd, const Outcome& outcome);

template <typename Child>
int ForkChild(int* outcome_fd, Child child) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  int pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm(60);  // a safety net: a hung child dies, and the parent says so
    SayOutcome(fds[1], child());
    exit(0);
  }
  close(fds[1]);
  *outcome_fd = fds[0];
  return pid;
}

}  // namespace forktest

#endif  // RPMA_SIM_TESTS_INTEGRATION_FORK_SUPPORT_H_
