// integration_support.h -- small helpers of the integration tests that use nothing but
// <librpma.h> and POSIX, and no gtest (so forked or exec'ed child processes can use them too).
#ifndef RPMA_SIM_TESTS_INTEGRATION_INTEGRATION_SUPPORT_H_
#define RPMA_SIM_TESTS_INTEGRATION_INTEGRATION_SUPPORT_H_

#include <infiniband/verbs.h>
#include <librpma.h>

#include <string>
#include <vector>

namespace integration {

// The longest any test waits for something that should happen promptly: only a safety net.
constexpr int kSafetyTimeoutMs = 10000;

constexpr const char kLoopback[] = "127.0.0.1";

// A TCP port of 127.0.0.1 that was free a moment ago (bind to port 0, getsockname, close), as
// a decimal string; "" if that failed.
std::string FreeTcpPort();

// Listens with `peer` on 127.0.0.1 at a free port, trying a few (a port found free can be
// taken before the bind). Returns rpma_ep_listen's last result; on 0, *ep and *port.
int ListenOnFreePort(rpma_peer* peer, rpma_ep** ep, std::string* port);

// The descriptor of `mr` (rpma_mr_get_descriptor_size + rpma_mr_get_descriptor); returns
// the first error.
int GetDescriptor(const rpma_mr_local* mr, std::vector<uint8_t>* desc);

// For a child process: listens with `peer` on a free port and says "PORT <port>" on the
// pipe (ChildFail if it cannot listen; exit status 5 if the pipe is gone).
rpma_ep* ChildListen(int pipe_fd, rpma_peer* peer);

// For a child process: says "ERROR <what>: <rpma_err_2str(ret)>" on the pipe and on stderr,
// then ends the process with status 3.
[[noreturn]] void ChildFail(int pipe_fd, const char* what, int ret);

// Waits up to timeout_ms until fd is readable (poll(2), POLLIN or POLLHUP). False on timeout
// or error.
bool WaitReadable(int fd, int timeout_ms);

// Writes all of [data, data + size) to fd; false on error.
bool WriteAll(int fd, const void* data, size_t size);

// Reads one '\n'-terminated line (without the '\n') from fd, waiting at most timeout_ms in
// all. False on timeout, error or end of file before the '\n'.
bool ReadLine(int fd, int timeout_ms, std::string* line);

// Waits (up to timeout_ms) for the connection's next event and takes it with
// rpma_conn_next_event. Returns RPMA_E_NO_EVENT on timeout, else what rpma_conn_next_event
// returned.
int NextEvent(rpma_conn* conn, int timeout_ms, rpma_conn_event* event);

// Takes the next completion of cq (rpma_cq_get_wc of one), waiting up to timeout_ms with the
// CQ's fd and rpma_cq_wait. Returns 0 (and *wc), RPMA_E_NO_COMPLETION on timeout, or another
// error of rpma_cq_get_wc / rpma_cq_wait.
int NextCompletion(rpma_cq* cq, int timeout_ms, ibv_wc* wc);

// Whether this process maps a connection's shared-memory segment (/proc/self/maps names
// /dev/shm/rpma-sim-...): its data path runs over shared memory.
bool MapsSharedMemorySegment();

// How many of the segments that process `pid` maps still have their name in /dev/shm
// (/proc/<pid>/maps shows /dev/shm/rpma-sim-... without " (deleted)"). Read from the
// process's own mappings, not from the pid in the names: a test in another pid namespace
// (Bazel's sandboxes run in parallel) may have a process with the same pid. -1 if the
// mappings cannot be read.
int NamedSegmentsMappedBy(int pid);

// Whether RPMA_SIM_TRANSPORT (as this test runs) lets a connection between two processes of
// this host use shared memory: unset, auto or shm.
bool SharedMemoryExpected();

// How many sockets this process holds now (-1 if /proc/self/fd cannot be read).
int OpenSockets();

// Milliseconds on a monotonic clock.
long long NowMs();

// `size` bytes (whole pages), each `fill`, between two PROT_NONE pages: whatever reaches past
// the region faults. The destructor unmaps it.
class GuardedRegion {
 public:
  GuardedRegion() = default;
  ~GuardedRegion();
  GuardedRegion(const GuardedRegion&) = delete;
  GuardedRegion& operator=(const GuardedRegion&) = delete;

  // False if `size` is not whole pages or the mapping fails.
  bool Map(size_t size, uint8_t fill);
  uint8_t* data() const { return region_; }

 private:
  uint8_t* mapping_ = nullptr;
  size_t mapped_ = 0;
  uint8_t* region_ = nullptr;
};

}  // namespace integration

#endif  // RPMA_SIM_TESTS_INTEGRATION_INTEGRATION_SUPPORT_H_
