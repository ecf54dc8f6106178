// direct_access_test.cc -- one-sided operations between two processes over shared memory are
// executed by the initiator itself, as an RDMA NIC executes them without the target's CPU:
// they complete while the target process is stopped (SIGSTOP). Deregistration, fault rules
// and arming in the target still decide what may land, and what lands reaches the target's
// persistence model.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include <rpma_sim/testing.h>

namespace {

using rpma_sim::testing::ConnectedPair;
using rpma_sim::testing::PairOptions;
using rpma_sim::testing::Side;

constexpr size_t kRegion = 256 << 10;

// Fills `n` bytes with a pattern that differs with `seed`.
void Fill(uint8_t* bytes, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 31 + seed);
}

// The server process's pid: it puts its own in the accept's private data (the test's code
// before Connect runs in the child too, where getpid() is the child's).
std::string OwnPid() { return std::to_string(getpid()); }

int ServerPid(rpma_conn* conn) {
  rpma_conn_private_data pdata;
  if (rpma_conn_get_private_data(conn, &pdata) != 0 || pdata.len == 0) return 0;
  return atoi(std::string(static_cast<const char*>(pdata.ptr), pdata.len).c_str());
}

// Stops a process for its life; continues it when it ends, whatever happened meanwhile.
class Stopped {
 public:
  explicit Stopped(int pid) : pid_(pid) { stopped_ = kill(pid_, SIGSTOP) == 0 && WaitStopped(); }
  ~Stopped() { kill(pid_, SIGCONT); }
  bool ok() const { return stopped_; }

 private:
  // Until /proc says the process is stopped ('T'): the signal is asynchronous.
  bool WaitStopped() {
    for (int i = 0; i < 100000; ++i) {
      char path[64], state = 0;
      snprintf(path, sizeof(path), "/proc/%d/stat", pid_);
      FILE* stat = fopen(path, "r");
      if (stat == nullptr) return false;
      int matched = fscanf(stat, "%*d %*s %c", &state);
      fclose(stat);
      if (matched == 1 && state == 'T') return true;
      sched_yield();
    }
    return false;
  }

  int pid_;
  bool stopped_ = false;
};

class DirectAccessTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM)); }
  void TearDown() override { pair_.Teardown(); }

  ConnectedPair pair_;
};

TEST_F(DirectAccessTest, WritesAndReadsCompleteWhileTheTargetProcessIsStopped) {
  PairOptions options;
  options.server_in_child = true;
  options.client_region_size = options.server_region_size = kRegion;
  options.server_private_data = OwnPid();
  options.direct_write_to_pmem = true;  // for the persistent flush at the end
  options.server_main = [](Side& server) {
    // Once the client has gone: what it wrote while this process was stopped.
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
    uint8_t expected[kRegion / 2];
    Fill(expected, sizeof(expected), 7);
    EXPECT_BYTES_EQ(server.memory, expected, sizeof(expected));
  };
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
  Side& client = pair_.client();
  int server_pid = ServerPid(client.conn);
  ASSERT_GT(server_pid, 0);
  Fill(client.memory, kRegion / 2, 7);
  {
    Stopped stopped(server_pid);
    ASSERT_TRUE(stopped.ok()) << "could not stop process " << server_pid;
    // A small write, then the rest in one large one, then the whole half read back into the
    // client's other half.
    ASSERT_EQ(0, rpma_write(client.conn, client.remote, 0, client.mr, 0, 64,
                            RPMA_F_COMPLETION_ALWAYS, nullptr));
    ASSERT_COMPLETION(client.cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
    ASSERT_EQ(0, rpma_write(client.conn, client.remote, 64, client.mr, 64, kRegion / 2 - 64,
                            RPMA_F_COMPLETION_ALWAYS, nullptr));
    ASSERT_COMPLETION(client.cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
    ASSERT_EQ(0, rpma_read(client.conn, client.mr, kRegion / 2, client.remote, 0, kRegion / 2,
                           RPMA_F_COMPLETION_ALWAYS, nullptr));
    ASSERT_COMPLETION(client.cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
  }
  EXPECT_BYTES_EQ(client.memory + kRegion / 2, client.memory, kRegion / 2);
  // A flush needs the target (it goes to its threads): it completes once it runs again.
  ASSERT_EQ(0, rpma_flush(client.conn, client.remote, 0, kRegion / 2, RPMA_FLUSH_TYPE_PERSISTENT,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_COMPLETION(client.cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
}

// A region only its own side uses (no remote access) takes no entry of the direct area: a
// server with more of them than the area has entries (64) still lets the client reach the
// region it registers after them by itself, while the server process is stopped.
TEST_F(DirectAccessTest, RegionsWithoutRemoteAccessLeaveTheDirectAreaToOthers) {
  constexpr int kLocalOnly = 80;
  constexpr size_t kTarget = 4096;
  PairOptions options;
  options.server_in_child = true;
  options.server_private_data = OwnPid();
  options.server_main = [](Side& server) {
    static uint8_t local[kLocalOnly][64];
    alignas(4096) static uint8_t target[kTarget];
    std::vector<rpma_mr_local*> locals(kLocalOnly, nullptr);
    for (int i = 0; i < kLocalOnly; ++i)
      ASSERT_EQ(0, rpma_mr_reg(server.peer, local[i], sizeof(local[i]), RPMA_MR_USAGE_WRITE_SRC,
                               &locals[i]));
    rpma_mr_local* target_mr = nullptr;
    ASSERT_EQ(0, rpma_mr_reg(server.peer, target, kTarget, RPMA_MR_USAGE_WRITE_DST, &target_mr));
    size_t descriptor_size = 0;
    ASSERT_EQ(0, rpma_mr_get_descriptor_size(target_mr, &descriptor_size));
    ASSERT_LE(descriptor_size, server.size);
    ASSERT_EQ(0, rpma_mr_get_descriptor(target_mr, server.memory));
    ASSERT_EQ(0, rpma_send(server.conn, server.mr, 0, descriptor_size, RPMA_F_COMPLETION_ON_ERROR,
                           nullptr));
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
    for (size_t i = 0; i < 64; ++i) ASSERT_EQ(0x3c, target[i]) << "offset " << i;
    ASSERT_EQ(0, rpma_mr_dereg(&target_mr));
    for (rpma_mr_local*& mr : locals) ASSERT_EQ(0, rpma_mr_dereg(&mr));
  };
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
  Side& client = pair_.client();
  int server_pid = ServerPid(client.conn);
  ASSERT_GT(server_pid, 0);
  ASSERT_EQ(0, rpma_recv(client.conn, client.mr, 0, client.size, nullptr));
  ibv_wc wc;
  ASSERT_EQ(0, rpma_sim::testing::NextCompletion(client.cq, &wc));
  ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
  rpma_mr_remote* target = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(client.memory, wc.byte_len, &target));
  memset(client.memory, 0x3c, 64);
  {
    Stopped stopped(server_pid);
    ASSERT_TRUE(stopped.ok()) << "could not stop process " << server_pid;
    ASSERT_EQ(
        0, rpma_write(client.conn, target, 0, client.mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, nullptr));
    EXPECT_COMPLETION(client.cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  }
  ASSERT_EQ(0, rpma_mr_remote_delete(&target));
}

// A server in a child process that does `act`, tells the client so with an empty message,
// and, once the connection ends (the client's next request fails it), checks with `after`.
PairOptions ServerActsThenSignals(std::function<void(Side&)> act,
                                  std::function<void(Side&)> after) {
  PairOptions options;
  options.server_in_child = true;
  options.server_main = [act, after](Side& server) {
    ASSERT_NO_FATAL_FAILURE(act(server));
    ASSERT_EQ(0, rpma_send(server.conn, nullptr, 0, 0, RPMA_F_COMPLETION_ON_ERROR, nullptr));
    after(server);
  };
  return options;
}

// The client's half: waits for the server's message, then writes `length` bytes of 0xa5.
void WriteOnceTheServerSignals(Side& client, size_t length) {
  ASSERT_EQ(0, rpma_recv(client.conn, client.mr, 0, 0, nullptr));
  ASSERT_COMPLETION(client.cq, IBV_WC_RECV, IBV_WC_SUCCESS);
  memset(client.memory, 0xa5, length);
  ASSERT_EQ(0, rpma_write(client.conn, client.remote, 0, client.mr, 0, length,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
}

// The server deregisters its region: from then on the client's write fails with
// IBV_WC_REM_ACCESS_ERR and nothing lands.
TEST_F(DirectAccessTest, AfterTheTargetDeregistersNoWriteLands) {
  auto deregister = [](Side& server) {
    memset(server.memory, 0x5a, server.size);
    ASSERT_EQ(0, rpma_mr_dereg(&server.mr));
  };
  auto unchanged = [](Side& server) {
    rpma_conn_event event;  // the failed write ends the connection; then the client leaves
    ASSERT_EQ(0, rpma_sim::testing::NextConnEvent(server.conn, &event));
    for (size_t i = 0; i < server.size; ++i) ASSERT_EQ(0x5a, server.memory[i]) << "offset " << i;
  };
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(ServerActsThenSignals(deregister, unchanged)));
  ASSERT_NO_FATAL_FAILURE(WriteOnceTheServerSignals(pair_.client(), pair_.client().size));
  ASSERT_COMPLETION(pair_.client().cq, IBV_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR);
}

// A fault rule in the target's process closes direct access: every request meets the rules
// there. Here a power failure fires as the client's write is about to land in the server.
TEST_F(DirectAccessTest, FaultRulesOfTheTargetSeeEveryRequest) {
  auto add_rule = [](Side&) {
    ASSERT_EQ(0, rpma_sim_fault_add("power_failure:op=write,side=server,loss=all"));
  };
  auto reverted = [](Side& server) {
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_LOST);
    uint64_t fired = 0;
    ASSERT_EQ(0, rpma_sim_fault_count(&fired));
    EXPECT_EQ(1u, fired);
    for (size_t i = 0; i < server.size; ++i) ASSERT_EQ(0, server.memory[i]) << "offset " << i;
  };
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(ServerActsThenSignals(add_rule, reverted)));
  Side& client = pair_.client();
  ASSERT_NO_FATAL_FAILURE(WriteOnceTheServerSignals(client, 64));
  ibv_wc wc;
  ASSERT_EQ(0, rpma_sim::testing::NextCompletion(client.cq, &wc));
  EXPECT_NE(IBV_WC_SUCCESS, wc.status) << "the write landed in a server that lost power";
  EXPECT_CONN_EVENT(client.conn, RPMA_CONN_LOST);
}

}  // namespace
