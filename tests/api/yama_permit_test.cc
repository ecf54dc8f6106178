// yama_permit_test.cc -- under Yama's ptrace_scope 1 the two processes of a shared-memory
// connection name each other (prctl(PR_SET_PTRACER)), so each still reaches the other's
// memory by process_vm, in both directions; where naming fails, every operation still lands,
// through the target's threads.
//
// This kernel has no Yama, so the tests emulate it (EmulatedYama): each process makes itself
// not dumpable and drops CAP_SYS_PTRACE, so no other process may use process_vm on it, and
// the simulator's prctl is replaced (PtracePermits::SetSystemForTest) by one that makes the
// process dumpable again. Coarser than Yama (a name lets every process of the user in), but
// the order is Yama's: a process reaches its peer only once the peer has named it. The
// server names its client before the client can name it, so the server's first probe fails
// and it must probe again once named. A region on part of a page is reached only by
// process_vm (or the target's threads): what completes while the target process is stopped
// went by process_vm.
#include <errno.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include <rpma_sim/testing.h>

#include "sim/transport/ptrace_permit.h"
#include "tests/common/peer_process.h"

namespace {

using rpma_sim::PtracePermits;
using rpma_sim::testing::PairOptions;
using rpma_sim::testing::Side;
using rpma_sim::tests::OwnPid;
using rpma_sim::tests::PeerPid;
using rpma_sim::tests::Stopped;

constexpr size_t kPartialPage = 1024;  // each side's region: the first 1 KiB of a page
constexpr size_t kBytes = 64;

// Takes CAP_SYS_PTRACE out of this thread's effective set. As root the capability overrides
// dumpability. Capabilities are per thread, so it runs before main (static initialization),
// before any thread of the simulator exists: they all inherit the set without it. The
// server's child (this binary run again) does the same.
bool DropPtraceCapability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[0].effective &= ~(1u << CAP_SYS_PTRACE);
  return syscall(SYS_capset, &header, data) == 0;
}
const bool g_without_ptrace_capability = DropPtraceCapability();

// The process this one named last (0: none yet).
std::atomic<int> g_named{0};

// Naming makes the process dumpable again, and names the peer for a real Yama too (where
// there is one; without Yama the prctl fails, and is not needed).
int NamingMakesDumpable(int pid) {
  if (pid != 0) {
    g_named = pid;
    prctl(PR_SET_PTRACER, static_cast<unsigned long>(pid), 0, 0, 0);
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  }
  return 0;  // taking the name back leaves the process dumpable (leak checkers need it)
}
int NamingFails(int) { return EPERM; }
int ScopeOne() { return 1; }
// A process that is not dumpable hides its maps from other processes, so the emulation
// cannot check that the peer maps the segment; proc_maps_test checks that check.
bool MapsAnySegment(int, const std::string&) { return true; }

// Yama at ptrace_scope 1, emulated for this process, with `set_ptracer` as its prctl.
class EmulatedYama {
 public:
  explicit EmulatedYama(int (*set_ptracer)(int)) : system_{ScopeOne, MapsAnySegment, set_ptracer} {
    PtracePermits::SetSystemForTest(&system_);
    ok_ = g_without_ptrace_capability && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
  }
  ~EmulatedYama() { End(); }
  EmulatedYama(const EmulatedYama&) = delete;
  EmulatedYama& operator=(const EmulatedYama&) = delete;
  bool ok() const { return ok_; }
  // Back to the kernel's rules (the server's child calls it before it exits).
  static void End() {
    PtracePermits::SetSystemForTest(nullptr);
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
  }

 private:
  PtracePermits::System system_;
  bool ok_ = false;
};

// Both sides' regions on part of a page; each side's pid in its private data.
PairOptions PartialPages() {
  PairOptions options;
  options.server_in_child = true;
  options.client_private_data = options.server_private_data = OwnPid();
  options.client_region_size = options.server_region_size = kPartialPage;
  return options;
}

// Writes kBytes of `value` from `from`'s region to the start of the other side's, with the
// other side's process stopped; the write completes (by process_vm) before it continues.
void WriteWhileThePeerIsStopped(Side& from, uint8_t value) {
  const int peer = PeerPid(from.conn);
  ASSERT_GT(peer, 0);
  memset(from.memory, value, kBytes);
  Stopped stopped(peer);
  ASSERT_TRUE(stopped.ok()) << "could not stop process " << peer;
  ASSERT_EQ(0, rpma_write(from.conn, from.remote, 0, from.mr, 0, kBytes, RPMA_F_COMPLETION_ALWAYS,
                          nullptr));
  ASSERT_COMPLETION(from.cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
}

void ExpectBytes(const Side& side, uint8_t value) {
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(value, side.memory[i]) << "offset " << i;
}

// A message with no bytes: "your turn".
void Signal(Side& side) {
  ASSERT_EQ(0, rpma_send(side.conn, nullptr, 0, 0, RPMA_F_COMPLETION_ON_ERROR, nullptr));
}
void AwaitSignal(Side& side) { ASSERT_COMPLETION(side.cq, IBV_WC_RECV, IBV_WC_SUCCESS); }

class YamaPermitTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM)); }
  void TearDown() override { pair_.Teardown(); }

  rpma_sim::testing::ConnectedPair pair_;
};

// Each process names the other, so each writes into the other's partial page while the other
// is stopped: the client after the server named it, the server after probing again.
TEST_F(YamaPermitTest, TheTwoProcessesNameEachOtherAndReachEachOtherByProcessVm) {
  EmulatedYama yama(NamingMakesDumpable);
  ASSERT_TRUE(yama.ok()) << strerror(errno);
  PairOptions options = PartialPages();
  options.server_main = [](Side& server) {
    EXPECT_EQ(PeerPid(server.conn), g_named.load()) << "the server named another process";
    ASSERT_EQ(0, rpma_recv(server.conn, server.mr, 0, 0, nullptr));
    ASSERT_NO_FATAL_FAILURE(AwaitSignal(server));  // the client wrote
    ExpectBytes(server, 0xc1);
    ASSERT_NO_FATAL_FAILURE(WriteWhileThePeerIsStopped(server, 0x5e));
    Signal(server);
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
    EmulatedYama::End();
  };
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
  Side& client = pair_.client();
  EXPECT_EQ(PeerPid(client.conn), g_named.load()) << "the client named another process";
  ASSERT_EQ(0, rpma_recv(client.conn, client.mr, kBytes, 0, nullptr));
  ASSERT_NO_FATAL_FAILURE(WriteWhileThePeerIsStopped(client, 0xc1));
  ASSERT_NO_FATAL_FAILURE(Signal(client));
  ASSERT_NO_FATAL_FAILURE(AwaitSignal(client));  // the server wrote, this process stopped
  ExpectBytes(client, 0x5e);
}

// Where the prctl fails neither process reaches the other by process_vm: the client's
// write waits for the server's threads (it does not complete while they are stopped), and
// lands once they run.
TEST_F(YamaPermitTest, WhereNamingFailsWritesGoThroughTheTargetsThreads) {
  EmulatedYama yama(NamingFails);
  ASSERT_TRUE(yama.ok()) << strerror(errno);
  PairOptions options = PartialPages();
  options.server_main = [](Side& server) {
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
    ExpectBytes(server, 0xc2);
    EmulatedYama::End();
  };
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
  Side& client = pair_.client();
  const int server = PeerPid(client.conn);
  ASSERT_GT(server, 0);
  memset(client.memory, 0xc2, kBytes);
  {
    Stopped stopped(server);
    ASSERT_TRUE(stopped.ok()) << "could not stop process " << server;
    ASSERT_EQ(0, rpma_write(client.conn, client.remote, 0, client.mr, 0, kBytes,
                            RPMA_F_COMPLETION_ALWAYS, nullptr));
    ibv_wc wc;
    EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_sim::testing::NextCompletion(client.cq, &wc, 200))
        << "the write completed with the target stopped: process_vm reached it unnamed";
  }
  ASSERT_COMPLETION(client.cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
}

}  // namespace
