// peer_killed_test.cc -- a connection between two processes whose peer process is killed
// (SIGKILL). It runs once per transport (RPMA_SIM_TRANSPORT=tcp, shm, and unset: auto must
// pick shared memory on one host); each run also checks which transport the connection
// used (a mapped segment or none) and that no segment name is left behind.
//
// The other side runs in a child process: this binary re-executed (fork + exec of
// /proc/self/exe) with --child-server or --child-client, so the child starts with a fresh
// librpma and no threads inherited from the test. A pipe carries "ready" lines (and the
// server's port) from the child to the test; nothing waits by sleeping.
//
//   ServerKilledWithWritesOutstanding: the test is the client. The child listens, accepts,
//     exposes a region (its descriptor as private data) and blocks in rpma_conn_next_event.
//     The test does write/read round trips, posts writes without waiting and kills the child:
//     it must see RPMA_CONN_LOST, every posted write must complete (SUCCESS before the kill,
//     IBV_WC_WR_FLUSH_ERR after), a write posted after LOST is flushed, and teardown works.
//   ClientKilledWhileServerWaitsForAnEvent: the test is the server, blocked in
//     rpma_conn_next_event (another thread) when the child client is killed: it must get
//     RPMA_CONN_LOST, its posted receive is flushed, and teardown works.
#include <gtest/gtest.h>
#include <librpma.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/child_process.h"
#include "tests/integration/integration_support.h"

using integration::Child;
using integration::ChildFail;
using integration::kLoopback;
using integration::kSafetyTimeoutMs;
using integration::NextCompletion;
using integration::NextEvent;
using integration::ReadLine;
using integration::WriteAll;

namespace {

constexpr size_t kRegionSize = 4 << 20;  // the region each side exposes / uses
constexpr size_t kRoundTripBytes = 4096;
constexpr int kOutstandingWrites = 8;
constexpr size_t kOutstandingWriteBytes = 512 << 10;  // 8 x 512 KiB = the whole region
constexpr char kChildMessage[] = "written by the child client over TCP";

// ---------------------------------------------------------------------------------------------
// The child processes (no gtest here: a failure is a line on the pipe and an exit code)

// Blocks in rpma_conn_next_event until killed. Returning from it means the connection ended
// before the kill, which the test reports.
[[noreturn]] void ChildBlockForever(rpma_conn* conn, int pipe_fd) {
  for (;;) {
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    int ret = rpma_conn_next_event(conn, &event);
    if (ret) ChildFail(pipe_fd, "rpma_conn_next_event (while waiting to be killed)", ret);
    fprintf(stderr, "child: unexpected event %s while waiting to be killed\n",
            rpma_utils_conn_event_2str(event));
    _exit(4);
  }
}

// --child-server PIPE_FD: listens on a free port, says "PORT <port>", accepts one client with
// the descriptor of a kRegionSize region as private data, says "ESTABLISHED", blocks.
int ChildServer(int pipe_fd) {
  ibv_context* ibv_ctx = nullptr;
  int ret = rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx);
  if (ret) ChildFail(pipe_fd, "rpma_utils_get_ibv_context", ret);
  rpma_peer* peer = nullptr;
  if ((ret = rpma_peer_new(ibv_ctx, &peer))) ChildFail(pipe_fd, "rpma_peer_new", ret);
  rpma_ep* ep = integration::ChildListen(pipe_fd, peer);

  void* region = nullptr;
  if (posix_memalign(&region, 4096, kRegionSize)) _exit(6);
  memset(region, 0, kRegionSize);
  rpma_mr_local* mr = nullptr;
  ret =
      rpma_mr_reg(peer, region, kRegionSize, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST, &mr);
  if (ret) ChildFail(pipe_fd, "rpma_mr_reg", ret);
  std::vector<uint8_t> desc;
  if ((ret = integration::GetDescriptor(mr, &desc)))
    ChildFail(pipe_fd, "rpma_mr_get_descriptor", ret);

  rpma_conn_req* req = nullptr;
  if ((ret = rpma_ep_next_conn_req(ep, nullptr, &req)))
    ChildFail(pipe_fd, "rpma_ep_next_conn_req", ret);
  rpma_conn_private_data pdata = {desc.data(), static_cast<uint8_t>(desc.size())};
  rpma_conn* conn = nullptr;
  if ((ret = rpma_conn_req_connect(&req, &pdata, &conn)))
    ChildFail(pipe_fd, "rpma_conn_req_connect", ret);
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  if ((ret = rpma_conn_next_event(conn, &event))) ChildFail(pipe_fd, "rpma_conn_next_event", ret);
  if (event != RPMA_CONN_ESTABLISHED) {
    std::string line =
        std::string("ERROR expected ESTABLISHED, got ") + rpma_utils_conn_event_2str(event) + "\n";
    WriteAll(pipe_fd, line.data(), line.size());
    _exit(7);
  }
  if (!WriteAll(pipe_fd, "ESTABLISHED\n", 12)) _exit(5);
  ChildBlockForever(conn, pipe_fd);
}

// --child-client PIPE_FD PORT: connects to 127.0.0.1:PORT, writes kChildMessage at offset 0
// of the server's region (descriptor in the private data) and reads it back, says "DONE",
// blocks.
int ChildClient(int pipe_fd, const char* port) {
  ibv_context* ibv_ctx = nullptr;
  int ret = rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx);
  if (ret) ChildFail(pipe_fd, "rpma_utils_get_ibv_context", ret);
  rpma_peer* peer = nullptr;
  if ((ret = rpma_peer_new(ibv_ctx, &peer))) ChildFail(pipe_fd, "rpma_peer_new", ret);
  rpma_conn_req* req = nullptr;
  if ((ret = rpma_conn_req_new(peer, kLoopback, port, nullptr, &req)))
    ChildFail(pipe_fd, "rpma_conn_req_new", ret);
  rpma_conn* conn = nullptr;
  if ((ret = rpma_conn_req_connect(&req, nullptr, &conn)))
    ChildFail(pipe_fd, "rpma_conn_req_connect", ret);
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  if ((ret = rpma_conn_next_event(conn, &event))) ChildFail(pipe_fd, "rpma_conn_next_event", ret);
  if (event != RPMA_CONN_ESTABLISHED) {
    std::string line =
        std::string("ERROR expected ESTABLISHED, got ") + rpma_utils_conn_event_2str(event) + "\n";
    WriteAll(pipe_fd, line.data(), line.size());
    _exit(7);
  }
  rpma_conn_private_data pdata = {nullptr, 0};
  if ((ret = rpma_conn_get_private_data(conn, &pdata)))
    ChildFail(pipe_fd, "rpma_conn_get_private_data", ret);
  rpma_mr_remote* remote = nullptr;
  if ((ret = rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &remote)))
    ChildFail(pipe_fd, "rpma_mr_remote_from_descriptor", ret);

  static char buffer[2 * sizeof(kChildMessage)];
  memcpy(buffer, kChildMessage, sizeof(kChildMessage));
  memset(buffer + sizeof(kChildMessage), 0, sizeof(kChildMessage));
  rpma_mr_local* mr = nullptr;
  ret = rpma_mr_reg(peer, buffer, sizeof(buffer), RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST,
                    &mr);
  if (ret) ChildFail(pipe_fd, "rpma_mr_reg", ret);
  rpma_cq* cq = nullptr;
  if ((ret = rpma_conn_get_cq(conn, &cq))) ChildFail(pipe_fd, "rpma_conn_get_cq", ret);
  ibv_wc wc;
  if ((ret = rpma_write(conn, remote, 0, mr, 0, sizeof(kChildMessage), RPMA_F_COMPLETION_ALWAYS,
                        nullptr)))
    ChildFail(pipe_fd, "rpma_write", ret);
  if ((ret = NextCompletion(cq, kSafetyTimeoutMs, &wc))) ChildFail(pipe_fd, "the write", ret);
  if (wc.status != IBV_WC_SUCCESS) ChildFail(pipe_fd, "the write's status", RPMA_E_PROVIDER);
  if ((ret = rpma_read(conn, mr, sizeof(kChildMessage), remote, 0, sizeof(kChildMessage),
                       RPMA_F_COMPLETION_ALWAYS, nullptr)))
    ChildFail(pipe_fd, "rpma_read", ret);
  if ((ret = NextCompletion(cq, kSafetyTimeoutMs, &wc))) ChildFail(pipe_fd, "the read", ret);
  if (wc.status != IBV_WC_SUCCESS) ChildFail(pipe_fd, "the read's status", RPMA_E_PROVIDER);
  if (memcmp(buffer + sizeof(kChildMessage), kChildMessage, sizeof(kChildMessage)) != 0)
    ChildFail(pipe_fd, "the read-back", RPMA_E_UNKNOWN);
  if (!WriteAll(pipe_fd, "DONE\n", 5)) _exit(5);
  ChildBlockForever(conn, pipe_fd);
}

// ---------------------------------------------------------------------------------------------
// The test's side

rpma_peer* NewPeer(rpma_util_ibv_context_type type) {
  ibv_context* ibv_ctx = nullptr;
  EXPECT_EQ(0, rpma_utils_get_ibv_context(kLoopback, type, &ibv_ctx));
  rpma_peer* peer = nullptr;
  if (ibv_ctx) {
    EXPECT_EQ(0, rpma_peer_new(ibv_ctx, &peer));
  }
  return peer;
}

void ExpectEvent(rpma_conn* conn, rpma_conn_event expected) {
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_EQ(0, NextEvent(conn, kSafetyTimeoutMs, &event))
      << "no connection event within " << kSafetyTimeoutMs << " ms";
  ASSERT_EQ(expected, event) << "got " << rpma_utils_conn_event_2str(event) << ", expected "
                             << rpma_utils_conn_event_2str(expected);
}

void ExpectCompletion(rpma_cq* cq, uint64_t wr_id, ibv_wc_status status, ibv_wc_opcode opcode) {
  ibv_wc wc;
  int ret = NextCompletion(cq, kSafetyTimeoutMs, &wc);
  ASSERT_EQ(0, ret) << "no completion (wr_id " << wr_id << "): " << rpma_err_2str(ret);
  EXPECT_EQ(wr_id, wc.wr_id);
  EXPECT_EQ(status, wc.status) << "got " << ibv_wc_status_str(wc.status) << ", expected "
                               << ibv_wc_status_str(status);
  if (status == IBV_WC_SUCCESS) {
    EXPECT_EQ(opcode, wc.opcode);
  }
}

const void* Ctx(uintptr_t n) { return reinterpret_cast<const void*>(n); }

// The connection is established: it runs over the transport this test's environment asks
// for, and the segment's name (if any) was removed once the server took it.
void ExpectTransport(pid_t client_pid) {
  EXPECT_EQ(integration::SharedMemoryExpected(), integration::MapsSharedMemorySegment())
      << "RPMA_SIM_TRANSPORT="
      << (getenv("RPMA_SIM_TRANSPORT") ? getenv("RPMA_SIM_TRANSPORT") : "(unset)");
  EXPECT_EQ(0, integration::NamedSegmentsMappedBy(client_pid));
}

TEST(PeerKilled, ServerKilledWithWritesOutstanding) {
  Child child("--child-server", {});
  ASSERT_TRUE(child.started());
  std::string line;
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("PORT ", &line, /*prefix=*/true));
  const std::string port = line.substr(5);

  rpma_peer* peer = NewPeer(RPMA_UTIL_IBV_CONTEXT_REMOTE);
  ASSERT_NE(nullptr, peer);
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(cfg, 64));
  ASSERT_EQ(0, rpma_conn_cfg_set_cq_size(cfg, 64));
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), cfg, &req));
  rpma_conn* conn = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &conn));
  ASSERT_NO_FATAL_FAILURE(ExpectEvent(conn, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("ESTABLISHED", nullptr));
  ExpectTransport(getpid());

  rpma_conn_private_data pdata = {nullptr, 0};
  ASSERT_EQ(0, rpma_conn_get_private_data(conn, &pdata));
  rpma_mr_remote* remote = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &remote));
  size_t remote_size = 0;
  ASSERT_EQ(0, rpma_mr_remote_get_size(remote, &remote_size));
  ASSERT_EQ(kRegionSize, remote_size);

  // src: what is written; dst: what is read back.
  std::vector<uint8_t> src(kRegionSize), dst(kRoundTripBytes);
  rpma_mr_local *src_mr = nullptr, *dst_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, src.data(), src.size(), RPMA_MR_USAGE_WRITE_SRC, &src_mr));
  ASSERT_EQ(0, rpma_mr_reg(peer, dst.data(), dst.size(), RPMA_MR_USAGE_READ_DST, &dst_mr));
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(conn, &cq));

  for (int round = 1; round <= 3; ++round) {
    for (size_t i = 0; i < kRoundTripBytes; ++i) src[i] = static_cast<uint8_t>(round * 31 + i);
    memset(dst.data(), 0, dst.size());
    ASSERT_EQ(0, rpma_write(conn, remote, 0, src_mr, 0, kRoundTripBytes, RPMA_F_COMPLETION_ALWAYS,
                            Ctx(100 + round)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq, 100 + round, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE));
    ASSERT_EQ(0, rpma_read(conn, dst_mr, 0, remote, 0, kRoundTripBytes, RPMA_F_COMPLETION_ALWAYS,
                           Ctx(200 + round)));
    ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq, 200 + round, IBV_WC_SUCCESS, IBV_WC_RDMA_READ));
    ASSERT_EQ(0, memcmp(src.data(), dst.data(), kRoundTripBytes)) << "round " << round;
  }

  // Writes posted without waiting, then the server dies.
  for (int k = 0; k < kOutstandingWrites; ++k) {
    ASSERT_EQ(
        0, rpma_write(conn, remote, k * kOutstandingWriteBytes, src_mr, k * kOutstandingWriteBytes,
                      kOutstandingWriteBytes, RPMA_F_COMPLETION_ALWAYS, Ctx(1000 + k)))
        << "write " << k;
  }
  ASSERT_NO_FATAL_FAILURE(child.KillAndReap());

  ASSERT_NO_FATAL_FAILURE(ExpectEvent(conn, RPMA_CONN_LOST));

  // Every posted write completes: SUCCESS for those done before the kill, then (in order, as
  // a send queue completes) IBV_WC_WR_FLUSH_ERR for the rest.
  std::vector<ibv_wc> wcs;
  for (int k = 0; k < kOutstandingWrites; ++k) {
    ibv_wc wc;
    int ret = NextCompletion(cq, kSafetyTimeoutMs, &wc);
    if (ret) {
      ADD_FAILURE() << "only " << k << " of " << kOutstandingWrites
                    << " outstanding writes completed: " << rpma_err_2str(ret);
      break;
    }
    wcs.push_back(wc);
  }
  EXPECT_EQ(static_cast<size_t>(kOutstandingWrites), wcs.size());
  int succeeded = 0, flushed = 0;
  for (size_t k = 0; k < wcs.size(); ++k) {
    EXPECT_EQ(1000 + k, wcs[k].wr_id) << "completion " << k << " out of order";
    if (wcs[k].status == IBV_WC_SUCCESS) {
      EXPECT_EQ(0, flushed) << "write " << k << " succeeded after an earlier one was flushed";
      EXPECT_EQ(IBV_WC_RDMA_WRITE, wcs[k].opcode);
      ++succeeded;
    } else {
      EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wcs[k].status)
          << "write " << k << ": " << ibv_wc_status_str(wcs[k].status);
      ++flushed;
    }
  }
  printf("outstanding writes: %d succeeded before the kill, %d flushed\n", succeeded, flushed);
  ibv_wc extra;
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq, 1, &extra, nullptr))
      << "an extra completion, wr_id " << extra.wr_id;

  // A write posted after LOST is accepted and flushed.
  ASSERT_EQ(0, rpma_write(conn, remote, 0, src_mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, Ctx(2000)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq, 2000, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));

  EXPECT_EQ(0, rpma_conn_disconnect(conn));
  EXPECT_EQ(0, rpma_conn_delete(&conn));
  EXPECT_EQ(nullptr, conn);
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
  EXPECT_EQ(0, rpma_mr_dereg(&src_mr));
  EXPECT_EQ(0, rpma_mr_dereg(&dst_mr));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

TEST(PeerKilled, ClientKilledWhileServerWaitsForAnEvent) {
  rpma_peer* peer = NewPeer(RPMA_UTIL_IBV_CONTEXT_LOCAL);
  ASSERT_NE(nullptr, peer);
  rpma_ep* ep = nullptr;
  std::string port;
  int ret = integration::ListenOnFreePort(peer, &ep, &port);
  ASSERT_EQ(0, ret) << "rpma_ep_listen: " << rpma_err_2str(ret);

  std::vector<char> region(64 << 10, 0);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(
      0, rpma_mr_reg(peer, region.data(), region.size(),
                     RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_RECV, &mr));
  std::vector<uint8_t> desc;
  ASSERT_EQ(0, integration::GetDescriptor(mr, &desc));

  Child child("--child-client", {port});
  ASSERT_TRUE(child.started());

  int ep_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep, &ep_fd));
  ASSERT_TRUE(integration::WaitReadable(ep_fd, kSafetyTimeoutMs))
      << "no connection request within " << kSafetyTimeoutMs << " ms";
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep, nullptr, &req));
  rpma_conn_private_data pdata = {desc.data(), static_cast<uint8_t>(desc.size())};
  rpma_conn* conn = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, &pdata, &conn));
  ASSERT_NO_FATAL_FAILURE(ExpectEvent(conn, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("DONE", nullptr));
  ExpectTransport(child.pid());

  // A receive that nothing will fill: the loss must flush it.
  ASSERT_EQ(0, rpma_recv(conn, mr, 4096, 64, Ctx(77)));

  // The test blocks in rpma_conn_next_event (in another thread) when the client dies.
  std::promise<std::pair<int, rpma_conn_event>> result;
  std::future<std::pair<int, rpma_conn_event>> outcome = result.get_future();
  std::thread waiter([conn, &result] {
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    int r = rpma_conn_next_event(conn, &event);
    result.set_value({r, event});
  });
  ASSERT_NO_FATAL_FAILURE(child.KillAndReap());
  if (outcome.wait_for(std::chrono::milliseconds(kSafetyTimeoutMs)) != std::future_status::ready) {
    // The thread is stuck in rpma_conn_next_event for good: nothing to clean up safely.
    fprintf(stderr,
            "FAILURE: rpma_conn_next_event did not return within %d ms after the "
            "client was killed\n",
            kSafetyTimeoutMs);
    fflush(nullptr);
    _exit(1);
  }
  waiter.join();
  std::pair<int, rpma_conn_event> got = outcome.get();
  EXPECT_EQ(0, got.first) << rpma_err_2str(got.first);
  EXPECT_EQ(RPMA_CONN_LOST, got.second) << "got " << rpma_utils_conn_event_2str(got.second);
  // Read only now: the child's "DONE" orders its write before this only through another
  // process, which ThreadSanitizer cannot see; the loss event is ordered after it here.
  EXPECT_STREQ(kChildMessage, region.data());

  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(conn, &cq));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(cq, 77, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV));

  EXPECT_EQ(0, rpma_conn_disconnect(conn));
  EXPECT_EQ(0, rpma_conn_delete(&conn));
  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  EXPECT_EQ(0, rpma_ep_shutdown(&ep));
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && strcmp(argv[1], "--child-server") == 0) return ChildServer(atoi(argv[2]));
  if (argc >= 4 && strcmp(argv[1], "--child-client") == 0)
    return ChildClient(atoi(argv[2]), argv[3]);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
