// power_failure_file_test.cc -- a power failure that ends the server's process (a
// `power_failure` rule with exit=1), whose registered memory is a shared mapping of a file:
// the file must hold exactly the durable image afterwards. Two processes, once per transport
// (RPMA_SIM_TRANSPORT=tcp, shm).
//
// The child (this binary re-executed, see child_process.h) maps the file (every byte 'o'),
// registers it for writes and persistent flushes, puts the rule
// `power_failure:op=write,nth=3,side=server,exit=1` in force, and serves one client. The
// test, as the client, writes 64 bytes and flushes them to persistence, writes 64 more
// without a flush, then writes a third time: the server's node loses power before that write
// lands. The test must see RPMA_CONN_LOST and the third write fail, the child must exit with
// status 1, and the file must hold the flushed bytes, and 'o' where the other two writes
// went.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/integration/child_process.h"
#include "tests/integration/integration_support.h"

using integration::Child;
using integration::ChildFail;
using integration::kLoopback;
using integration::kSafetyTimeoutMs;
using integration::NextCompletion;
using integration::NextEvent;
using integration::WriteAll;

namespace {

constexpr size_t kFileSize = 4096;
constexpr char kBefore = 'o';
constexpr size_t kChunk = 64;
constexpr int kExitStatus = 1;

// --child-server PIPE_FD FILE: the server described above. Says "PORT <port>", then
// "ESTABLISHED", then waits for events until the rule ends the process.
int ChildServer(int pipe_fd, const char* path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, kFileSize) != 0) _exit(5);
  void* map = mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) _exit(5);
  memset(map, kBefore, kFileSize);

  int ret = rpma_sim_fault_add("power_failure:op=write,nth=3,side=server,exit=1");
  if (ret) ChildFail(pipe_fd, "rpma_sim_fault_add", ret);
  ibv_context* ibv_ctx = nullptr;
  if ((ret = rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx)))
    ChildFail(pipe_fd, "rpma_utils_get_ibv_context", ret);
  rpma_peer* peer = nullptr;
  if ((ret = rpma_peer_new(ibv_ctx, &peer))) ChildFail(pipe_fd, "rpma_peer_new", ret);
  rpma_mr_local* mr = nullptr;
  if ((ret = rpma_mr_reg(peer, map, kFileSize,
                         RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr)))
    ChildFail(pipe_fd, "rpma_mr_reg", ret);
  std::vector<uint8_t> desc;
  if ((ret = integration::GetDescriptor(mr, &desc)))
    ChildFail(pipe_fd, "rpma_mr_get_descriptor", ret);

  rpma_ep* ep = integration::ChildListen(pipe_fd, peer);

  rpma_conn_req* req = nullptr;
  if ((ret = rpma_ep_next_conn_req(ep, nullptr, &req)))
    ChildFail(pipe_fd, "rpma_ep_next_conn_req", ret);
  rpma_conn_private_data pdata = {desc.data(), static_cast<uint8_t>(desc.size())};
  rpma_conn* conn = nullptr;
  if ((ret = rpma_conn_req_connect(&req, &pdata, &conn)))
    ChildFail(pipe_fd, "rpma_conn_req_connect", ret);
  if (!WriteAll(pipe_fd, "ESTABLISHED\n", 12)) _exit(5);
  for (;;) pause();  // the rule ends the process, from the progress engine's thread
}

class PowerFailureFileTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (remote_ != nullptr) EXPECT_EQ(0, rpma_mr_remote_delete(&remote_));
    if (conn_ != nullptr) EXPECT_EQ(0, rpma_conn_delete(&conn_));
    if (src_mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&src_mr_));
    if (peer_ != nullptr) EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  void Write(size_t offset, uintptr_t id) {
    ASSERT_EQ(0, rpma_write(conn_, remote_, offset, src_mr_, offset, kChunk,
                            RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<void*>(id)));
  }

  void ExpectCompletion(uintptr_t id, ibv_wc_status status) {
    ibv_wc wc;
    ASSERT_EQ(0, NextCompletion(cq_, kSafetyTimeoutMs, &wc));
    EXPECT_EQ(id, wc.wr_id);
    EXPECT_EQ(status, wc.status) << ibv_wc_status_str(wc.status);
  }

  rpma_peer* peer_ = nullptr;
  rpma_conn* conn_ = nullptr;
  rpma_cq* cq_ = nullptr;
  rpma_mr_local* src_mr_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  char src_[kFileSize];
};

TEST_F(PowerFailureFileTest, FileHoldsExactlyTheDurableImage) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string path =
      std::string(tmp != nullptr ? tmp : "/tmp") + "/pmem-" + std::to_string(getpid());
  Child child("--child-server", {path});
  ASSERT_TRUE(child.started());
  std::string port_line;
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("PORT ", &port_line, /*prefix=*/true));

  ibv_context* ibv_ctx = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx));
  ASSERT_EQ(0, rpma_peer_new(ibv_ctx, &peer_));
  for (size_t i = 0; i < kFileSize; ++i) src_[i] = static_cast<char>('A' + i / kChunk % 26);
  ASSERT_EQ(0, rpma_mr_reg(peer_, src_, sizeof(src_), RPMA_MR_USAGE_WRITE_SRC, &src_mr_));
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_line.substr(5).c_str(), nullptr, &req));
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &conn_));
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_EQ(0, NextEvent(conn_, kSafetyTimeoutMs, &event));
  ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
  ASSERT_NO_FATAL_FAILURE(child.ExpectLine("ESTABLISHED", nullptr));
  rpma_conn_private_data pdata;
  ASSERT_EQ(0, rpma_conn_get_private_data(conn_, &pdata));
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &remote_));
  ASSERT_EQ(0, rpma_conn_get_cq(conn_, &cq_));
  rpma_peer_cfg* pcfg = nullptr;  // the server's memory is written to directly
  ASSERT_EQ(0, rpma_peer_cfg_new(&pcfg));
  ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
  ASSERT_EQ(0, rpma_conn_apply_remote_peer_cfg(conn_, pcfg));
  ASSERT_EQ(0, rpma_peer_cfg_delete(&pcfg));

  ASSERT_NO_FATAL_FAILURE(Write(0, 1));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(1, IBV_WC_SUCCESS));
  ASSERT_EQ(0, rpma_flush(conn_, remote_, 0, kChunk, RPMA_FLUSH_TYPE_PERSISTENT,
                          RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<void*>(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(2, IBV_WC_SUCCESS));
  ASSERT_NO_FATAL_FAILURE(Write(kChunk, 3));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(3, IBV_WC_SUCCESS));
  ASSERT_NO_FATAL_FAILURE(Write(2 * kChunk, 4));  // the power fails before it lands

  ibv_wc wc;
  ASSERT_EQ(0, NextCompletion(cq_, kSafetyTimeoutMs, &wc));
  EXPECT_EQ(4u, wc.wr_id);
  EXPECT_NE(IBV_WC_SUCCESS, wc.status);
  ASSERT_EQ(0, NextEvent(conn_, kSafetyTimeoutMs, &event));
  EXPECT_EQ(RPMA_CONN_LOST, event);
  int status = 0;
  ASSERT_NO_FATAL_FAILURE(child.Reap(&status));
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(kExitStatus, WEXITSTATUS(status));

  // What the next process would find in the file.
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<char> image(kFileSize);
  ASSERT_EQ(static_cast<ssize_t>(kFileSize), pread(fd, image.data(), kFileSize, 0));
  close(fd);
  unlink(path.c_str());
  EXPECT_EQ(0, memcmp(image.data(), src_, kChunk)) << "the flushed write did not survive";
  for (size_t i = kChunk; i < kFileSize; ++i)
    ASSERT_EQ(kBefore, image[i]) << "byte " << i << " was not reverted";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "--child-server") == 0)
    return ChildServer(atoi(argv[2]), argv[3]);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
