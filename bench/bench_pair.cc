// bench_pair.cc -- setting up, driving and tearing down the benchmark's connected pair.
#include "bench/bench_pair.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace {

// A benchmark that cannot set up or drive its pair ends with status 1 and the reason (as
// on a machine without RDMA under --config=real), not with a core dump.
[[noreturn]] void Fail() { exit(1); }

void Check(int ret, const char* call) {
  if (ret == 0) return;
  fprintf(stderr, "%s failed: %s\n", call, rpma_err_2str(ret));
  Fail();
}

std::string FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sin);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) != 0) {
    perror("finding a free port");
    Fail();
  }
  close(fd);
  return std::to_string(ntohs(sin.sin_port));
}

void ExpectEvent(rpma_conn* conn, rpma_conn_event expected) {
  rpma_conn_event event;
  Check(rpma_conn_next_event(conn, &event), "rpma_conn_next_event");
  if (event != expected) {
    fprintf(stderr, "unexpected event: %s\n", rpma_utils_conn_event_2str(event));
    Fail();
  }
}

constexpr int kUsageAll = RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST |
                          RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_WRITE_DST |
                          RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_SEND |
                          RPMA_MR_USAGE_RECV;

}  // namespace

BenchPair::BenchPair(size_t buffer_size)
    : client_buffer_(buffer_size, 'c'), server_buffer_(buffer_size, 's') {
  const char* addr = "127.0.0.1";
  std::string port = FreePort();
  ibv_context* ctx;
  Check(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx), "get_ibv_context");
  Check(rpma_peer_new(ctx, &peer_), "rpma_peer_new");
  Check(rpma_ep_listen(peer_, addr, port.c_str(), &ep_), "rpma_ep_listen");
  rpma_conn_cfg* cfg;
  Check(rpma_conn_cfg_new(&cfg), "rpma_conn_cfg_new");
  Check(rpma_conn_cfg_set_sq_size(cfg, 128), "set_sq_size");
  Check(rpma_conn_cfg_set_rq_size(cfg, 128), "set_rq_size");
  Check(rpma_conn_cfg_set_cq_size(cfg, 256), "set_cq_size");
  rpma_conn_req* client_req;
  Check(rpma_conn_req_new(peer_, addr, port.c_str(), cfg, &client_req), "rpma_conn_req_new");
  Check(rpma_conn_req_connect(&client_req, nullptr, &client_), "client connect");
  rpma_conn_req* server_req;
  Check(rpma_ep_next_conn_req(ep_, cfg, &server_req), "rpma_ep_next_conn_req");
  Check(rpma_conn_req_connect(&server_req, nullptr, &server_), "server accept");
  ExpectEvent(client_, RPMA_CONN_ESTABLISHED);
  ExpectEvent(server_, RPMA_CONN_ESTABLISHED);
  Check(rpma_conn_cfg_delete(&cfg), "rpma_conn_cfg_delete");

  Check(rpma_mr_reg(peer_, client_buffer_.data(), buffer_size, kUsageAll, &client_mr_), "mr_reg");
  Check(rpma_mr_reg(peer_, server_buffer_.data(), buffer_size, kUsageAll, &server_mr_), "mr_reg");
  char descriptor[64];
  Check(rpma_mr_get_descriptor(server_mr_, descriptor), "rpma_mr_get_descriptor");
  Check(rpma_mr_remote_from_descriptor(descriptor, sizeof(descriptor), &remote_mr_),
        "rpma_mr_remote_from_descriptor");
  Check(rpma_conn_get_cq(client_, &client_cq_), "rpma_conn_get_cq");
  Check(rpma_conn_get_cq(server_, &server_cq_), "rpma_conn_get_cq");
}

BenchPair::~BenchPair() {
  Check(rpma_conn_disconnect(client_), "rpma_conn_disconnect");
  ExpectEvent(client_, RPMA_CONN_CLOSED);
  ExpectEvent(server_, RPMA_CONN_CLOSED);
  Check(rpma_conn_delete(&client_), "rpma_conn_delete");
  Check(rpma_conn_delete(&server_), "rpma_conn_delete");
  Check(rpma_mr_remote_delete(&remote_mr_), "rpma_mr_remote_delete");
  Check(rpma_mr_dereg(&client_mr_), "rpma_mr_dereg");
  Check(rpma_mr_dereg(&server_mr_), "rpma_mr_dereg");
  Check(rpma_ep_shutdown(&ep_), "rpma_ep_shutdown");
  Check(rpma_peer_delete(&peer_), "rpma_peer_delete");
}

static int Flags(bool signaled) {
  return signaled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
}

void BenchPair::Write(size_t size, bool signaled) {
  Check(rpma_write(client_, remote_mr_, 0, client_mr_, 0, size, Flags(signaled), nullptr),
        "rpma_write");
}

void BenchPair::Read(size_t size, bool signaled) {
  Check(rpma_read(client_, client_mr_, 0, remote_mr_, 0, size, Flags(signaled), nullptr),
        "rpma_read");
}

void BenchPair::Flush(size_t size, bool signaled) {
  Check(rpma_flush(client_, remote_mr_, 0, size, RPMA_FLUSH_TYPE_VISIBILITY, Flags(signaled),
                   nullptr),
        "rpma_flush");
}

void BenchPair::PollOne(rpma_cq* cq, ibv_wc_opcode expected) {
  ibv_wc wc;
  int ret;
  while ((ret = rpma_cq_get_wc(cq, 1, &wc, nullptr)) == RPMA_E_NO_COMPLETION) {
  }
  Check(ret, "rpma_cq_get_wc");
  if (wc.status != IBV_WC_SUCCESS || wc.opcode != expected) {
    fprintf(stderr, "unexpected completion: %s, opcode %d\n", ibv_wc_status_str(wc.status),
            wc.opcode);
    Fail();
  }
}

void BenchPair::WaitSendCompletion() {
  ibv_wc wc;
  int ret;
  while ((ret = rpma_cq_get_wc(client_cq_, 1, &wc, nullptr)) == RPMA_E_NO_COMPLETION) {
  }
  Check(ret, "rpma_cq_get_wc");
  if (wc.status != IBV_WC_SUCCESS) {
    fprintf(stderr, "completion failed: %s\n", ibv_wc_status_str(wc.status));
    Fail();
  }
}

void BenchPair::SendWithReceive(size_t size, bool signaled) {
  Check(rpma_recv(server_, server_mr_, 0, size, nullptr), "rpma_recv");
  Check(rpma_send(client_, client_mr_, 0, size, Flags(signaled), nullptr), "rpma_send");
  PollOne(server_cq_, IBV_WC_RECV);
}

void BenchPair::SendAndReceive(size_t size) {
  SendWithReceive(size, true);
  WaitSendCompletion();
}

void BenchPair::CopyLocally(size_t size) {
  memcpy(server_buffer_.data(), client_buffer_.data(), size);
  asm volatile("" : : "r"(server_buffer_.data()) : "memory");
}
