// test_support.cc -- API-test helpers: free TCP ports, fd readiness, connected client/server pairs,
// completions, registered memory.
#include "tests/common/test_support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

std::string FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) {
    ADD_FAILURE() << "socket: " << strerror(errno);
    return "";
  }
  sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_port = htons(0);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "bind/getsockname: " << strerror(errno);
    close(fd);
    return "";
  }
  close(fd);
  return std::to_string(ntohs(addr.sin_port));
}

bool WaitReadable(int fd, int timeout_ms) {
  pollfd pfd;
  pfd.fd = fd;
  pfd.events = POLLIN;
  pfd.revents = 0;
  int ret;
  do {
    ret = poll(&pfd, 1, timeout_ms);
  } while (ret < 0 && errno == EINTR);
  return ret == 1 && (pfd.revents & POLLIN) != 0;
}

bool IsReadableNow(int fd) { return WaitReadable(fd, 0); }

void SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  ASSERT_NE(-1, flags) << "fcntl(F_GETFL): " << strerror(errno);
  ASSERT_EQ(0, fcntl(fd, F_SETFL, flags | O_NONBLOCK)) << "fcntl(F_SETFL): " << strerror(errno);
}

void NewLocalPeer(rpma_peer** peer_ptr) {
  ibv_context* ibv_ctx = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
  ASSERT_NE(nullptr, ibv_ctx);
  ASSERT_EQ(0, rpma_peer_new(ibv_ctx, peer_ptr));
  ASSERT_NE(nullptr, *peer_ptr);
}

void NextConnReq(rpma_ep* ep, const rpma_conn_cfg* cfg, rpma_conn_req** req_ptr) {
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep, &fd));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs)) << "no connection request arrived";
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep, cfg, req_ptr));
  ASSERT_NE(nullptr, *req_ptr);
}

void NextEvent(rpma_conn* conn, rpma_conn_event* event) {
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs)) << "no connection event arrived";
  ASSERT_EQ(0, rpma_conn_next_event(conn, event));
}

void ExpectNextEvent(rpma_conn* conn, rpma_conn_event expected) {
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_NO_FATAL_FAILURE(NextEvent(conn, &event));
  ASSERT_EQ(expected, event) << "got \"" << rpma_utils_conn_event_2str(event) << "\", expected \""
                             << rpma_utils_conn_event_2str(expected) << "\"";
}

void ExpectNoPendingEvent(rpma_conn* conn) {
  int fd = -1;
  ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
  EXPECT_FALSE(IsReadableNow(fd)) << "an unexpected connection event is pending";
}

void ClientConnect(rpma_peer* peer, const std::string& port, const rpma_conn_cfg* cfg,
                   const rpma_conn_private_data* pdata, rpma_conn** client) {
  rpma_conn_req* client_req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), cfg, &client_req));
  ASSERT_NE(nullptr, client_req);
  ASSERT_EQ(0, rpma_conn_req_connect(&client_req, pdata, client));
  ASSERT_EQ(nullptr, client_req);
  ASSERT_NE(nullptr, *client);
}

void ConnectOnce(rpma_peer* peer, rpma_ep* ep, const std::string& port, const PairOptions& options,
                 rpma_conn** client, rpma_conn** server) {
  ASSERT_NO_FATAL_FAILURE(
      ClientConnect(peer, port, options.client_cfg, options.client_pdata, client));

  rpma_conn_req* server_req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(ep, options.server_cfg, &server_req));
  ASSERT_EQ(0, rpma_conn_req_connect(&server_req, options.server_pdata, server));
  ASSERT_EQ(nullptr, server_req);
  ASSERT_NE(nullptr, *server);

  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*server, RPMA_CONN_ESTABLISHED));
}

void DisconnectAndDelete(rpma_conn** first, rpma_conn** second) {
  ASSERT_EQ(0, rpma_conn_disconnect(*first));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*first, RPMA_CONN_CLOSED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*second, RPMA_CONN_CLOSED));
  ASSERT_EQ(0, rpma_conn_disconnect(*second));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(*first));
  ASSERT_NO_FATAL_FAILURE(ExpectNoPendingEvent(*second));
  ASSERT_EQ(0, rpma_conn_delete(first));
  ASSERT_EQ(nullptr, *first);
  ASSERT_EQ(0, rpma_conn_delete(second));
  ASSERT_EQ(nullptr, *second);
}

void CloseConnections(rpma_conn** first, rpma_conn** second) {
  if (!::testing::Test::HasFailure() && *first != nullptr && *second != nullptr) {
    DisconnectAndDelete(first, second);
  }
  for (rpma_conn** conn : {first, second}) {
    if (*conn != nullptr) {
      EXPECT_EQ(0, rpma_conn_delete(conn));
    }
  }
}

int WaitWc(rpma_cq* cq, ibv_wc* wc) {
  memset(wc, 0, sizeof(*wc));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kSafetyTimeoutMs);
  for (;;) {
    int ret = rpma_cq_get_wc(cq, 1, wc, nullptr);
    if (ret != RPMA_E_NO_COMPLETION || std::chrono::steady_clock::now() >= deadline) return ret;
    std::this_thread::yield();
  }
}

void PollOne(rpma_cq* cq, ibv_wc* wc) {
  int ret = WaitWc(cq, wc);
  ASSERT_NE(RPMA_E_NO_COMPLETION, ret) << "no completion arrived";
  ASSERT_EQ(0, ret);
}

void ExpectNoCompletion(rpma_cq* cq) {
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  EXPECT_EQ(RPMA_E_NO_COMPLETION, rpma_cq_get_wc(cq, 1, &wc, nullptr))
      << "unexpected completion: wr_id " << wc.wr_id << " status " << wc.status << " opcode "
      << wc.opcode;
}

void ExpectCompletion(rpma_cq* cq, uint64_t wr_id, ibv_wc_status status, ibv_wc_opcode opcode,
                      ibv_wc* out) {
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(PollOne(cq, &wc));
  EXPECT_EQ(wr_id, wc.wr_id);
  EXPECT_EQ(status, wc.status);
  if (status == IBV_WC_SUCCESS) {
    EXPECT_EQ(opcode, wc.opcode);
  }
  if (out != nullptr) *out = wc;
}

void ExpectCompletion(rpma_cq* cq, uint64_t wr_id, ibv_wc_opcode opcode) {
  ExpectCompletion(cq, wr_id, IBV_WC_SUCCESS, opcode);
}

void ExpectQpCompletion(rpma_cq* cq, uint32_t qp_num, const void* ctx, ibv_wc_status status,
                        ibv_wc_opcode opcode) {
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(
      ExpectCompletion(cq, reinterpret_cast<uint64_t>(ctx), status, opcode, &wc));
  EXPECT_EQ(qp_num, wc.qp_num);
}

rpma_cq* MainCq(rpma_conn* conn) {
  rpma_cq* cq = nullptr;
  EXPECT_EQ(0, rpma_conn_get_cq(conn, &cq));
  return cq;
}

rpma_cq* Rcq(rpma_conn* conn) {
  rpma_cq* rcq = reinterpret_cast<rpma_cq*>(uintptr_t{1});  // must be overwritten
  EXPECT_EQ(0, rpma_conn_get_rcq(conn, &rcq));
  return rcq;
}

uint32_t QpNum(rpma_conn* conn) {
  uint32_t qp_num = 0;
  EXPECT_EQ(0, rpma_conn_get_qp_num(conn, &qp_num));
  return qp_num;
}

void RemoteFromDescriptor(const rpma_mr_local* mr, rpma_mr_remote** remote,
                          std::vector<uint8_t>* desc) {
  std::vector<uint8_t> bytes;
  if (desc == nullptr) desc = &bytes;
  size_t size = 0;
  ASSERT_EQ(0, rpma_mr_get_descriptor_size(mr, &size));
  desc->resize(size);
  ASSERT_EQ(0, rpma_mr_get_descriptor(mr, desc->data()));
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc->data(), desc->size(), remote));
}

Registrations::~Registrations() {
  for (rpma_mr_remote* remote : remotes_) (void)rpma_mr_remote_delete(&remote);
  for (rpma_mr_local* mr : locals_) (void)rpma_mr_dereg(&mr);
}

void Registrations::Register(rpma_peer* peer, void* ptr, size_t size, int usage,
                             rpma_mr_local** mr) {
  ASSERT_EQ(0, rpma_mr_reg(peer, ptr, size, usage, mr));
  locals_.push_back(*mr);
}

void Registrations::Deregister(rpma_mr_local** mr) {
  for (rpma_mr_local*& kept : locals_)
    if (kept == *mr) kept = nullptr;
  ASSERT_EQ(0, rpma_mr_dereg(mr));
}

void Registrations::RemoteOf(const rpma_mr_local* mr, rpma_mr_remote** remote,
                             std::vector<uint8_t>* desc) {
  ASSERT_NO_FATAL_FAILURE(RemoteFromDescriptor(mr, remote, desc));
  remotes_.push_back(*remote);
}

Buffer* Registrations::NewBuffer(rpma_peer* peer, size_t size, int usage, uint8_t fill) {
  buffers_.push_back(std::make_unique<Buffer>());
  Buffer* buffer = buffers_.back().get();
  buffer->bytes.assign(size, fill);
  Register(peer, buffer->bytes.data(), size, usage, &buffer->mr);
  return buffer;
}

rpma_mr_remote* Registrations::RemoteOf(const Buffer* buffer) {
  rpma_mr_remote* remote = nullptr;
  RemoteOf(buffer->mr, &remote);
  return remote;
}

void Registrations::Release() {
  for (rpma_mr_remote*& remote : remotes_) EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
  for (rpma_mr_local*& mr : locals_) EXPECT_EQ(0, rpma_mr_dereg(&mr));
  remotes_.clear();
  locals_.clear();
}

ScopedCap::ScopedCap(rpma_sim_device_cap cap) : cap_(cap) {
  EXPECT_EQ(0, rpma_sim_set_device_cap(cap_, true));
}

ScopedCap::~ScopedCap() {
  EXPECT_EQ(0, rpma_sim_set_device_cap(cap_, false));
  bool enabled = true;
  EXPECT_EQ(0, rpma_sim_get_device_cap(cap_, &enabled));
  EXPECT_FALSE(enabled);
}

ConnectedPair::~ConnectedPair() {
  if (client != nullptr) (void)rpma_conn_delete(&client);
  if (server != nullptr) (void)rpma_conn_delete(&server);
  if (ep != nullptr) (void)rpma_ep_shutdown(&ep);
  if (peer != nullptr) (void)rpma_peer_delete(&peer);
}

void ConnectedPair::Listen() {
  if (peer == nullptr) {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  }
  if (ep != nullptr) return;
  port = FreeTcpPort();
  ASSERT_FALSE(port.empty());
  ASSERT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), &ep));
  ASSERT_NE(nullptr, ep);
}

void ConnectedPair::Connect(const PairOptions& options) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(ConnectOnce(peer, ep, port, options, &client, &server));
}

void ConnectedPair::Teardown() {
  if (client != nullptr && server != nullptr) {
    ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  }
  for (rpma_conn** conn : {&client, &server}) {
    if (*conn != nullptr) {
      ASSERT_EQ(0, rpma_conn_delete(conn));
      ASSERT_EQ(nullptr, *conn);
    }
  }
  if (ep != nullptr) {
    ASSERT_EQ(0, rpma_ep_shutdown(&ep));
    ASSERT_EQ(nullptr, ep);
  }
  if (peer != nullptr) {
    ASSERT_EQ(0, rpma_peer_delete(&peer));
    ASSERT_EQ(nullptr, peer);
  }
}

void ConnectAndGetRejected(rpma_peer* peer, rpma_ep* ep, const std::string& port, bool disconnect) {
  rpma_conn* client = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnect(peer, port, nullptr, nullptr, &client));
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(ep, nullptr, &incoming));
  ASSERT_EQ(0, rpma_conn_req_delete(&incoming));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_REJECTED));
  if (disconnect) (void)rpma_conn_disconnect(client);
  ASSERT_EQ(0, rpma_conn_delete(&client));
}

void WaitForCompletion(rpma_cq* cq, ibv_wc* wc) {
  int cq_fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(cq, &cq_fd));
  ASSERT_TRUE(WaitReadable(cq_fd, kSafetyTimeoutMs)) << "no completion";
  ASSERT_EQ(0, rpma_cq_wait(cq));
  *wc = {};
  ASSERT_EQ(0, rpma_cq_get_wc(cq, 1, wc, nullptr));
}

void WriteThenDeregister(ConnectedPair& pair, Registrations& registrations, const Buffer& source,
                         rpma_mr_local** mr, size_t length) {
  rpma_mr_remote* remote = nullptr;
  ASSERT_NO_FATAL_FAILURE(RemoteFromDescriptor(*mr, &remote));
  ASSERT_EQ(0, rpma_write(pair.client, remote, 0, source.mr, 0, length, RPMA_F_COMPLETION_ALWAYS,
                          nullptr));
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(pair.client, &cq));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(WaitForCompletion(cq, &wc));
  ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
  ASSERT_EQ(0, rpma_mr_remote_delete(&remote));
  ASSERT_NO_FATAL_FAILURE(registrations.Deregister(mr));
}

void PeerFixture::SetUp() {
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer_));
  port_ = FreeTcpPort();
  ASSERT_FALSE(port_.empty());
}

void PeerFixture::TearDown() {
  if (ep_ != nullptr) {
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
  }
  if (peer_ != nullptr) {
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }
}

void PeerFixture::Listen() {
  ASSERT_EQ(0, rpma_ep_listen(peer_, kLoopback, port_.c_str(), &ep_));
  ASSERT_NE(nullptr, ep_);
}

void PairFixture::TearDown() {
  CloseConnections(&pair_.client, &pair_.server);
  regs_.Release();
  ReleaseMore();
  for (rpma_conn_cfg*& cfg : cfgs_) EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  if (!HasFailure()) pair_.Teardown();
}

rpma_conn_cfg* PairFixture::NewCfg() {
  rpma_conn_cfg* cfg = nullptr;
  EXPECT_EQ(0, rpma_conn_cfg_new(&cfg));
  cfgs_.push_back(cfg);
  return cfg;
}

void PairFixture::NewCfg(rpma_conn_cfg** cfg) {
  ASSERT_EQ(0, rpma_conn_cfg_new(cfg));
  cfgs_.push_back(*cfg);
}

void PairFixture::ConnectPair(const PairOptions& options) {
  ASSERT_NO_FATAL_FAILURE(pair_.Connect(options));
  ASSERT_EQ(0, rpma_conn_get_cq(pair_.client, &client_cq_));
  ASSERT_EQ(0, rpma_conn_get_cq(pair_.server, &server_cq_));
  ASSERT_NE(nullptr, client_cq_);
  ASSERT_NE(nullptr, server_cq_);
  ASSERT_EQ(0, rpma_conn_get_qp_num(pair_.client, &client_qp_num_));
  ASSERT_EQ(0, rpma_conn_get_qp_num(pair_.server, &server_qp_num_));
}

Buffer* PairFixture::Source(size_t size, uint8_t seed, uint8_t step) {
  Buffer* buffer = Register(size, RPMA_MR_USAGE_SEND, 0);
  for (size_t i = 0; i < size; ++i) buffer->bytes[i] = static_cast<uint8_t>(seed + i * step);
  return buffer;
}

void PairFixture::PostRecvAndSend(Buffer* dst, size_t recv_offset, size_t recv_len,
                                  uintptr_t recv_id, Buffer* src, size_t src_offset, size_t len,
                                  uintptr_t send_id) {
  ASSERT_EQ(0, rpma_recv(pair_.server, dst->mr, recv_offset, recv_len, Ctx(recv_id)));
  ASSERT_EQ(
      0, rpma_send(pair_.client, src->mr, src_offset, len, RPMA_F_COMPLETION_ALWAYS, Ctx(send_id)));
}

void PairFixture::ExpectRecvAndSend(uint64_t recv_id, ibv_wc_status recv_status, uint64_t send_id,
                                    ibv_wc_status send_status, ibv_wc* recv_wc) {
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(server_cq_, recv_id, recv_status, IBV_WC_RECV, recv_wc));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, send_id, send_status, IBV_WC_SEND));
}
