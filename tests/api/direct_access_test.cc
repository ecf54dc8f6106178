// direct_access_test.cc -- one-sided operations between two processes over shared memory are
// executed by the initiator itself, as an RDMA NIC executes them without the target's CPU:
// they complete while the target process is stopped (SIGSTOP). Deregistration, fault rules
// and arming in the target still decide what may land, and what lands reaches the target's
// persistence model. Copies through process_vm (a region on part of a heap page) that wait
// to move together still execute in order, whatever makes them move.
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <rpma_sim/testing.h>

#include "tests/common/peer_process.h"

namespace {

using rpma_sim::testing::ConnectedPair;
using rpma_sim::testing::PairOptions;
using rpma_sim::testing::Side;
using rpma_sim::tests::OwnPid;
using rpma_sim::tests::Stopped;

constexpr size_t kRegion = 256 << 10;

// Fills `n` bytes with a pattern that differs with `seed`.
void Fill(uint8_t* bytes, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 31 + seed);
}

class DirectAccessTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM)); }
  void TearDown() override {
    pair_.Teardown();
    EXPECT_EQ(0, rpma_sim_fault_clear());
  }

  // Connects for `writes` writes to a region on part of a heap page (PartialPageOptions),
  // their values in the client's region, the server running `server_main`.
  void ConnectForWrites(size_t writes, std::function<void(Side&)> server_main);

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
  int server_pid = rpma_sim::tests::PeerPid(client.conn);
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
  int server_pid = rpma_sim::tests::PeerPid(client.conn);
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

// ---------------------------------------------------------------------------------------------
// A region on part of a heap page never moves into a shared mapping, so the initiator reaches
// it through process_vm. Requests posted while earlier ones are not polled yet wait to move
// together in one system call: when the application polls, sleeps on its completion fd,
// posts something that cannot wait, disconnects, or (soon) on the progress engine's turn.
// Whatever triggers them, they execute in order, as if each had executed at its post.

constexpr size_t kPartialPage = 1024;  // the region: the first 1 KiB of a page
constexpr size_t kSlots = kPartialPage / sizeof(uint64_t);

// Whether the simulator in this process uses process_vm on `pid`: it is not turned off
// (rpma_sim(7)), and the kernel allows it (Yama may not): an unmapped address then fails with
// EFAULT rather than EPERM.
bool ProcessVmUsed(int pid) {
  const char* setting = getenv("RPMA_SIM_SHM_PROCESS_VM");
  if (setting != nullptr && strcmp(setting, "0") == 0) return false;
  char byte;
  iovec local{&byte, 1}, remote{nullptr, 1};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == -1 && errno == EFAULT;
}

// The server's region is the first kPartialPage bytes of a page; the client's holds the
// values of `writes` 8-byte writes (FillWriteValues) and, after them, room for a copy of the
// server's region.
PairOptions PartialPageOptions(size_t writes) {
  PairOptions options;
  options.server_in_child = true;
  options.server_private_data = OwnPid();
  options.server_region_size = kPartialPage;
  options.client_region_size = writes * sizeof(uint64_t) + kPartialPage;
  options.sq_size = options.cq_size = 512;
  return options;
}

uint64_t ValueOfWrite(size_t i) { return (i + 1) * 0x0101010101010101ull; }

// Write i puts ValueOfWrite(i) into slot i % kSlots of the server's region.
void FillWriteValues(Side& client, size_t writes) {
  for (size_t i = 0; i < writes; ++i) {
    uint64_t value = ValueOfWrite(i);
    memcpy(client.memory + i * sizeof(value), &value, sizeof(value));
  }
}

// What slot `slot` holds after `writes` of them: the last write to it, 0 if none.
uint64_t ExpectedSlot(size_t slot, size_t writes) {
  if (slot >= writes) return 0;
  return ValueOfWrite(slot + (writes - 1 - slot) / kSlots * kSlots);
}

int PostWrite(Side& client, size_t i, int flags) {
  return rpma_write(client.conn, client.remote, (i % kSlots) * sizeof(uint64_t), client.mr,
                    i * sizeof(uint64_t), sizeof(uint64_t), flags,
                    reinterpret_cast<const void*>(static_cast<uintptr_t>(i)));
}

// The server's region holds what `writes` wrote.
void ExpectSlots(const Side& server, size_t writes) {
  for (size_t slot = 0; slot < kSlots; ++slot) {
    uint64_t value;
    memcpy(&value, server.memory + slot * sizeof(value), sizeof(value));
    ASSERT_EQ(ExpectedSlot(slot, writes), value) << "slot " << slot;
  }
}

// The server's code: once the client has gone, its region holds what `writes` wrote.
std::function<void(Side&)> ServerSeesWrites(size_t writes) {
  return [writes](Side& server) {
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
    ExpectSlots(server, writes);
  };
}

void DirectAccessTest::ConnectForWrites(size_t writes, std::function<void(Side&)> server_main) {
  PairOptions options = PartialPageOptions(writes);
  options.server_main = std::move(server_main);
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
  FillWriteValues(pair_.client(), writes);
}

// Posts `writes` writes, the first signalled and its completion polled (so the queue is no
// longer armed: nothing sleeps on its fd, and nothing wakes the engine for the rest), the
// rest unsignalled and not polled.
void PostWritesAfterAPoll(Side& client, size_t writes) {
  ASSERT_EQ(0, PostWrite(client, 0, RPMA_F_COMPLETION_ALWAYS));
  ASSERT_COMPLETION_ID(client.cq, 0, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  for (size_t i = 1; i < writes; ++i)
    ASSERT_EQ(0, PostWrite(client, i, RPMA_F_COMPLETION_ON_ERROR));
}

TEST_F(DirectAccessTest, GatheredWritesToAPartialPageLandInOrderWithTheTargetStopped) {
  constexpr size_t kWrites = 300;  // more than one system call's worth, slots written twice
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, ServerSeesWrites(kWrites)));
  Side& client = pair_.client();
  const int server_pid = rpma_sim::tests::PeerPid(client.conn);
  ASSERT_GT(server_pid, 0);
  uint8_t* copy = client.memory + kWrites * sizeof(uint64_t);
  {
    // Without process_vm the target's threads place them: it runs then.
    std::optional<Stopped> stopped;
    if (ProcessVmUsed(server_pid)) stopped.emplace(server_pid);
    ASSERT_TRUE(!stopped || stopped->ok()) << "could not stop process " << server_pid;
    // Every 16th signalled, then a read of the whole region: all posted before any poll.
    for (size_t i = 0; i < kWrites; ++i)
      ASSERT_EQ(0, PostWrite(client, i,
                             i % 16 == 15 ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR));
    ASSERT_EQ(0, rpma_read(client.conn, client.mr, kWrites * sizeof(uint64_t), client.remote, 0,
                           kPartialPage, RPMA_F_COMPLETION_ALWAYS, nullptr));
    for (size_t i = 15; i < kWrites; i += 16)
      ASSERT_COMPLETION_ID(client.cq, i, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
    ASSERT_COMPLETION_ID(client.cq, 0, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
  }
  for (size_t slot = 0; slot < kSlots; ++slot) {
    uint64_t value;
    memcpy(&value, copy + slot * sizeof(value), sizeof(value));
    ASSERT_EQ(ExpectedSlot(slot, kWrites), value) << "slot " << slot;
  }
}

// Reads among the writes see what the writes before them wrote, and no later one.
TEST_F(DirectAccessTest, ReadsAmongGatheredWritesSeeTheWritesBeforeThem) {
  constexpr size_t kWrites = 3 * kSlots;
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, ServerSeesWrites(kWrites)));
  Side& client = pair_.client();
  uint8_t* copies = client.memory + kWrites * sizeof(uint64_t);
  // Each round writes every slot, then reads slot 0 into its own place: round r's read sees
  // round r's value.
  for (size_t round = 0; round < 3; ++round) {
    for (size_t slot = 0; slot < kSlots; ++slot)
      ASSERT_EQ(0, PostWrite(client, round * kSlots + slot, RPMA_F_COMPLETION_ON_ERROR));
    ASSERT_EQ(0, rpma_read(client.conn, client.mr, kWrites * sizeof(uint64_t) + round * 8,
                           client.remote, 0, sizeof(uint64_t), RPMA_F_COMPLETION_ALWAYS,
                           reinterpret_cast<const void*>(round)));
  }
  for (size_t round = 0; round < 3; ++round) {
    ASSERT_COMPLETION_ID(client.cq, round, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
    uint64_t value;
    memcpy(&value, copies + round * 8, sizeof(value));
    EXPECT_EQ(ValueOfWrite(round * kSlots), value) << "round " << round;
  }
}

// An application that sleeps on its completion fd right after posting is woken by their
// completion: the progress engine executes them.
TEST_F(DirectAccessTest, GatheredWritesCompleteForAnApplicationAsleepOnItsFd) {
  constexpr size_t kWrites = 40;
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, ServerSeesWrites(kWrites)));
  Side& client = pair_.client();
  for (size_t i = 0; i < kWrites; ++i)
    ASSERT_EQ(0,
              PostWrite(client, i,
                        i + 1 == kWrites ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR));
  int fd;
  ASSERT_EQ(0, rpma_cq_get_fd(client.cq, &fd));
  pollfd readable{fd, POLLIN, 0};
  ASSERT_EQ(1, poll(&readable, 1, 30000)) << "no completion event in 30 s";
  ASSERT_EQ(0, rpma_cq_wait(client.cq));
  ibv_wc wc;
  ASSERT_EQ(0, rpma_cq_get_wc(client.cq, 1, &wc, nullptr));
  EXPECT_EQ(kWrites - 1, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

// An application that neither polls nor waits (it watches the target's memory, say) still
// has its writes land: the progress engine's turn comes soon.
TEST_F(DirectAccessTest, GatheredWritesLandWithoutAPollOrAWait) {
  constexpr size_t kWrites = 50;
  auto watch = [](Side& server) {
    // The last write's value, watched for; then everything before it is there too.
    const size_t last_slot = (kWrites - 1) % kSlots;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    uint64_t value = 0;
    while (value != ValueOfWrite(kWrites - 1) && std::chrono::steady_clock::now() < deadline) {
      sched_yield();
      memcpy(&value, const_cast<const uint8_t*>(server.memory) + last_slot * 8, sizeof(value));
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
    }
    ASSERT_EQ(ValueOfWrite(kWrites - 1), value) << "the last write did not land in 30 s";
    ExpectSlots(server, kWrites);
    ASSERT_EQ(0, rpma_conn_disconnect(server.conn));  // what the client waits for
    EXPECT_CONN_EVENT(server.conn, RPMA_CONN_CLOSED);
  };
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, watch));
  Side& client = pair_.client();
  ASSERT_NO_FATAL_FAILURE(PostWritesAfterAPoll(client, kWrites));
  EXPECT_CONN_EVENT(client.conn, RPMA_CONN_CLOSED);
}

// A request that fails behind gathered writes completes after theirs, with its error.
TEST_F(DirectAccessTest, AnErrorBehindGatheredWritesCompletesAfterThem) {
  constexpr size_t kWrites = 20;
  auto ended = [](Side& server) {
    rpma_conn_event event;  // the failed write ends the connection; then the client leaves
    ASSERT_EQ(0, rpma_sim::testing::NextConnEvent(server.conn, &event));
    ExpectSlots(server, kWrites);
  };
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, ended));
  Side& client = pair_.client();
  for (size_t i = 0; i < kWrites; ++i) ASSERT_EQ(0, PostWrite(client, i, RPMA_F_COMPLETION_ALWAYS));
  // Past the region's end: the target refuses it.
  ASSERT_EQ(0, rpma_write(client.conn, client.remote, kPartialPage - 4, client.mr, 0, 8,
                          RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void*>(kWrites)));
  for (size_t i = 0; i < kWrites; ++i)
    ASSERT_COMPLETION_ID(client.cq, i, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  ASSERT_COMPLETION_ID(client.cq, kWrites, IBV_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR);
}

// A write kept to move with others that fails once it moved (here a fault rule at its
// completion) puts the queue pair in error before anything posted after it leaves: an atomic
// write posted behind it (an atomic write never waits) is flushed, and never reaches the target.
TEST_F(DirectAccessTest, WhatFollowsAKeptWriteThatFailsIsFlushedUnsent) {
  if (!ProcessVmUsed(getpid())) GTEST_SKIP() << "no process_vm: no write waits to move";
  constexpr size_t kWrites = 3;  // the third waits to move
  constexpr size_t kAtomicSlot = 100;
  auto ended = [](Side& server) {
    rpma_conn_event event;  // the client leaves
    ASSERT_EQ(0, rpma_sim::testing::NextConnEvent(server.conn, &event));
    uint64_t value;
    memcpy(&value, server.memory + kAtomicSlot * sizeof(value), sizeof(value));
    EXPECT_EQ(0u, value) << "the flushed atomic write reached the target";
  };
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, ended));
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=write,status=IBV_WC_RETRY_EXC_ERR,nth=3,side=client"));
  Side& client = pair_.client();
  ASSERT_NO_FATAL_FAILURE(PostWritesAfterAPoll(client, kWrites));
  const char value[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_EQ(0, rpma_atomic_write(client.conn, client.remote, kAtomicSlot * sizeof(uint64_t), value,
                                 RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void*>(99)));
  ASSERT_COMPLETION_ID(client.cq, kWrites - 1, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR);
  ASSERT_COMPLETION_ID(client.cq, 99, IBV_WC_RDMA_WRITE, IBV_WC_WR_FLUSH_ERR);
}

// A write failed at its submission by an injected local error, behind a kept write that fails
// once it moved: the kept write's error comes first and flushes it.
TEST_F(DirectAccessTest, ALocalErrorBehindAKeptWriteThatFailsIsFlushed) {
  if (!ProcessVmUsed(getpid())) GTEST_SKIP() << "no process_vm: no write waits to move";
  constexpr size_t kWrites = 4;  // the third waits to move; the fourth fails at submission
  auto ended = [](Side& server) {
    rpma_conn_event event;  // the client leaves
    ASSERT_EQ(0, rpma_sim::testing::NextConnEvent(server.conn, &event));
  };
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, ended));
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=write,status=IBV_WC_RETRY_EXC_ERR,nth=3,side=client"));
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=write,status=IBV_WC_LOC_PROT_ERR,nth=4,side=client"));
  Side& client = pair_.client();
  ASSERT_NO_FATAL_FAILURE(PostWritesAfterAPoll(client, kWrites - 1));
  ASSERT_EQ(0, PostWrite(client, kWrites - 1, RPMA_F_COMPLETION_ALWAYS));
  ASSERT_COMPLETION_ID(client.cq, kWrites - 2, IBV_WC_RDMA_WRITE, IBV_WC_RETRY_EXC_ERR);
  ASSERT_COMPLETION_ID(client.cq, kWrites - 1, IBV_WC_RDMA_WRITE, IBV_WC_WR_FLUSH_ERR);
}

// Writes posted right before a disconnect land before the peer hears of it.
TEST_F(DirectAccessTest, GatheredWritesLandBeforeADisconnect) {
  constexpr size_t kWrites = 60;
  ASSERT_NO_FATAL_FAILURE(ConnectForWrites(kWrites, ServerSeesWrites(kWrites)));
  Side& client = pair_.client();
  ASSERT_NO_FATAL_FAILURE(PostWritesAfterAPoll(client, kWrites));
  ASSERT_EQ(0, rpma_conn_disconnect(client.conn));
  EXPECT_CONN_EVENT(client.conn, RPMA_CONN_CLOSED);
}

}  // namespace
