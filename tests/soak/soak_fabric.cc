// soak_fabric.cc -- the soak's peers, regions and connection, over the public API only.
#include "tests/soak/soak_fabric.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <random>

namespace soak {
namespace {

uint64_t failure_seed = 0;
const uint64_t* failure_operation = nullptr;

constexpr char kLoopback[] = "127.0.0.1";

constexpr int kTargetUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
                             RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT |
                             RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

// A port on 127.0.0.1 that was free a moment ago (bind to port 0, read it, close).
std::string FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Fatal("socket: %s", strerror(errno));
  sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    Fatal("bind/getsockname: %s", strerror(errno));
  close(fd);
  return std::to_string(ntohs(addr.sin_port));
}

// Waits until fd is readable; Fatal with `what` after the safety timeout.
void WaitReadable(int fd, const char* what) {
  pollfd pfd = {fd, POLLIN, 0};
  int ret = poll(&pfd, 1, kSafetyTimeoutMs);
  if (ret != 1 || (pfd.revents & POLLIN) == 0)
    Fatal("no %s within %d ms (poll: %d)", what, kSafetyTimeoutMs, ret);
}

rpma_conn_cfg* NewCfg(uint32_t sq, uint32_t rq) {
  rpma_conn_cfg* cfg = nullptr;
  Check(rpma_conn_cfg_new(&cfg), "rpma_conn_cfg_new");
  Check(rpma_conn_cfg_set_sq_size(cfg, sq), "rpma_conn_cfg_set_sq_size");
  Check(rpma_conn_cfg_set_rq_size(cfg, rq), "rpma_conn_cfg_set_rq_size");
  Check(rpma_conn_cfg_set_cq_size(cfg, sq + rq), "rpma_conn_cfg_set_cq_size");
  return cfg;
}

}  // namespace

void Fatal(const char* format, ...) {
  char message[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  fprintf(stdout, "soak: FAILED (seed %llu, operation %llu): %s\n",
          static_cast<unsigned long long>(failure_seed),
          static_cast<unsigned long long>(failure_operation ? *failure_operation : 0), message);
  fflush(stdout);
  _exit(1);
}

void SetFailureContext(uint64_t seed, const uint64_t* operation_index) {
  failure_seed = seed;
  failure_operation = operation_index;
}

void Check(int ret, const char* call) {
  if (ret != 0) Fatal("%s returned %d (%s)", call, ret, rpma_err_2str(ret));
}

SoakFabric::~SoakFabric() { Close(); }

void SoakFabric::Register(rpma_peer* peer, Region* region, size_t size, size_t skew, int usage) {
  if (posix_memalign(&region->allocation, 4096, size + skew) != 0) Fatal("out of memory");
  region->bytes = static_cast<uint8_t*>(region->allocation) + skew;
  region->size = size;
  Check(rpma_mr_reg(peer, region->bytes, size, usage, &region->mr), "rpma_mr_reg");
  if (usage & RPMA_MR_USAGE_WRITE_DST) {
    size_t desc_size = 0;
    Check(rpma_mr_get_descriptor_size(region->mr, &desc_size), "rpma_mr_get_descriptor_size");
    std::string desc(desc_size, '\0');
    Check(rpma_mr_get_descriptor(region->mr, &desc[0]), "rpma_mr_get_descriptor");
    Check(rpma_mr_remote_from_descriptor(desc.data(), desc_size, &region->remote),
          "rpma_mr_remote_from_descriptor");
  }
}

void SoakFabric::Deregister(Region* region) {
  if (region->remote != nullptr)
    Check(rpma_mr_remote_delete(&region->remote), "rpma_mr_remote_delete");
  if (region->mr != nullptr) Check(rpma_mr_dereg(&region->mr), "rpma_mr_dereg");
  free(region->allocation);
  *region = Region();
}

void SoakFabric::Open(uint64_t fill_seed) {
  ibv_context* device = nullptr;
  Check(rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device),
        "rpma_utils_get_ibv_context");
  Check(rpma_peer_new(device, &server_peer_), "rpma_peer_new");
  Check(rpma_peer_new(device, &client_peer_), "rpma_peer_new");
  Check(rpma_sim_power_failure_arm(server_peer_), "rpma_sim_power_failure_arm");
  // The port was free a moment ago; another process may take it meanwhile, so try again.
  for (int attempt = 0;; ++attempt) {
    port_ = FreeTcpPort();
    int ret = rpma_ep_listen(server_peer_, kLoopback, port_.c_str(), &ep_);
    if (ret == 0) break;
    if (attempt == 10) Check(ret, "rpma_ep_listen");
  }
  Register(server_peer_, &target_a, kTargetASize, 0, kTargetUsage);
  Register(server_peer_, &target_b, kTargetBSize, 24, kTargetUsage);
  Register(server_peer_, &recv, kRecvSlot * kMaxRecvSlots, 0, RPMA_MR_USAGE_RECV);
  Register(client_peer_, &source, kSourceSize, 0, RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND);
  Register(client_peer_, &read_dst, kReadSlot * kMaxReadSlots, 0, RPMA_MR_USAGE_READ_DST);
  std::mt19937_64 fill(fill_seed);
  for (Region* region : {&target_a, &target_b, &recv, &source})
    for (size_t i = 0; i < region->size; ++i) region->bytes[i] = static_cast<uint8_t>(fill());
}

void SoakFabric::Connect(const QueueSizes& sizes) {
  rpma_conn_cfg* client_cfg = NewCfg(sizes.sq, 1);
  rpma_conn_cfg* server_cfg = NewCfg(1, sizes.rq);
  rpma_conn_req* req = nullptr;
  Check(rpma_conn_req_new(client_peer_, kLoopback, port_.c_str(), client_cfg, &req),
        "rpma_conn_req_new (client)");
  Check(rpma_conn_req_connect(&req, nullptr, &client_), "rpma_conn_req_connect (client)");
  int ep_fd = -1;
  Check(rpma_ep_get_fd(ep_, &ep_fd), "rpma_ep_get_fd");
  WaitReadable(ep_fd, "connection request");
  Check(rpma_ep_next_conn_req(ep_, server_cfg, &req), "rpma_ep_next_conn_req");
  Check(rpma_conn_req_connect(&req, nullptr, &server_), "rpma_conn_req_connect (server)");
  for (rpma_conn* conn : {client_, server_}) {
    rpma_conn_event event = NextEvent(conn);
    if (event != RPMA_CONN_ESTABLISHED)
      Fatal("connecting: %s instead of ESTABLISHED", rpma_utils_conn_event_2str(event));
  }
  Check(rpma_conn_cfg_delete(&client_cfg), "rpma_conn_cfg_delete");
  Check(rpma_conn_cfg_delete(&server_cfg), "rpma_conn_cfg_delete");
  rpma_peer_cfg* pcfg = nullptr;
  Check(rpma_peer_cfg_new(&pcfg), "rpma_peer_cfg_new");
  Check(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true),
        "rpma_peer_cfg_set_direct_write_to_pmem");
  Check(rpma_conn_apply_remote_peer_cfg(client_, pcfg), "rpma_conn_apply_remote_peer_cfg");
  Check(rpma_peer_cfg_delete(&pcfg), "rpma_peer_cfg_delete");
  Check(rpma_conn_get_cq(client_, &client_cq_), "rpma_conn_get_cq");
  Check(rpma_conn_get_cq(server_, &server_cq_), "rpma_conn_get_cq");
  Check(rpma_conn_get_qp_num(client_, &client_qp_num_), "rpma_conn_get_qp_num");
  Check(rpma_conn_get_qp_num(server_, &server_qp_num_), "rpma_conn_get_qp_num");
}

rpma_conn_event SoakFabric::NextEvent(rpma_conn* conn) {
  int fd = -1;
  Check(rpma_conn_get_event_fd(conn, &fd), "rpma_conn_get_event_fd");
  WaitReadable(fd, conn == client_ ? "client connection event" : "server connection event");
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  Check(rpma_conn_next_event(conn, &event), "rpma_conn_next_event");
  return event;
}

void SoakFabric::DeleteConnections() {
  if (client_ != nullptr) Check(rpma_conn_delete(&client_), "rpma_conn_delete (client)");
  if (server_ != nullptr) Check(rpma_conn_delete(&server_), "rpma_conn_delete (server)");
  client_cq_ = server_cq_ = nullptr;
}

void SoakFabric::Close() {
  if (client_ != nullptr && server_ != nullptr) {
    Check(rpma_conn_disconnect(client_), "rpma_conn_disconnect");
    rpma_conn_event client_event = NextEvent(client_);
    rpma_conn_event server_event = NextEvent(server_);
    if (client_event != RPMA_CONN_CLOSED || server_event != RPMA_CONN_CLOSED)
      Fatal("closing: %s and %s instead of CLOSED", rpma_utils_conn_event_2str(client_event),
            rpma_utils_conn_event_2str(server_event));
  }
  DeleteConnections();
  for (Region* region : {&target_a, &target_b, &recv, &source, &read_dst})
    if (region->allocation != nullptr) Deregister(region);
  if (ep_ != nullptr) Check(rpma_ep_shutdown(&ep_), "rpma_ep_shutdown");
  if (client_peer_ != nullptr) Check(rpma_peer_delete(&client_peer_), "rpma_peer_delete");
  if (server_peer_ != nullptr) Check(rpma_peer_delete(&server_peer_), "rpma_peer_delete");
}

}  // namespace soak
