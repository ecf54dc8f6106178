// fork_support.cc -- see fork_support.h.
#include "tests/integration/fork_support.h"

#include <rpma_sim.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <vector>

#include "tests/integration/integration_support.h"

namespace forktest {
namespace {

using integration::kLoopback;
using integration::kSafetyTimeoutMs;

Outcome Returned(const char* call, int got, int expected) {
  return std::string(call) + " returned " + std::to_string(got) + " (" + rpma_err_2str(got) +
         "), expected " + std::to_string(expected) + " (" + rpma_err_2str(expected) + ")";
}

// Returns from the enclosing function unless `call` returns `expected`.
#define EXPECT_RETURNS(expected, call)                                        \
  do {                                                                        \
    int returned_ = (call);                                                   \
    if (returned_ != (expected)) return Returned(#call, returned_, expected); \
  } while (0)

// Returns from the enclosing function if `outcome` says something went wrong.
#define RETURN_IF_FAILED(outcome)           \
  do {                                      \
    Outcome outcome_ = (outcome);           \
    if (!outcome_.empty()) return outcome_; \
  } while (0)

Outcome ExpectCompletion(rpma_conn* conn, ibv_wc_opcode opcode) {
  rpma_cq* cq = nullptr;
  EXPECT_RETURNS(0, rpma_conn_get_cq(conn, &cq));
  ibv_wc wc;
  EXPECT_RETURNS(0, integration::NextCompletion(cq, kSafetyTimeoutMs, &wc));
  if (wc.status != IBV_WC_SUCCESS || wc.opcode != opcode)
    return std::string("a completion came with ") + ibv_wc_status_str(wc.status) + " and opcode " +
           std::to_string(wc.opcode) + ", expected opcode " + std::to_string(opcode);
  return "";
}

Outcome NewPeer(rpma_util_ibv_context_type type, rpma_peer** peer) {
  ibv_context* device = nullptr;
  EXPECT_RETURNS(0, rpma_utils_get_ibv_context(kLoopback, type, &device));
  EXPECT_RETURNS(0, rpma_peer_new(device, peer));
  return "";
}

}  // namespace

Outcome ExpectEvent(rpma_conn* conn, rpma_conn_event expected) {
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  EXPECT_RETURNS(0, integration::NextEvent(conn, kSafetyTimeoutMs, &event));
  if (event != expected)
    return std::string("the event was ") + rpma_utils_conn_event_2str(event) + ", expected " +
           rpma_utils_conn_event_2str(expected);
  return "";
}

Outcome WriteAndReadBack(rpma_peer* peer, rpma_conn* conn, uint8_t pattern, size_t slot) {
  rpma_conn_private_data pdata{};
  EXPECT_RETURNS(0, rpma_conn_get_private_data(conn, &pdata));
  rpma_mr_remote* remote = nullptr;
  EXPECT_RETURNS(0, rpma_mr_remote_from_descriptor(pdata.ptr, pdata.len, &remote));
  std::vector<uint8_t> bytes(2 * kSlotSize, pattern);
  memset(bytes.data() + kSlotSize, 0, kSlotSize);
  rpma_mr_local* mr = nullptr;
  EXPECT_RETURNS(0, rpma_mr_reg(peer, bytes.data(), bytes.size(),
                                RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &mr));
  const size_t at = slot * kSlotSize;
  EXPECT_RETURNS(0,
                 rpma_write(conn, remote, at, mr, 0, kSlotSize, RPMA_F_COMPLETION_ALWAYS, nullptr));
  RETURN_IF_FAILED(ExpectCompletion(conn, IBV_WC_RDMA_WRITE));
  EXPECT_RETURNS(
      0, rpma_read(conn, mr, kSlotSize, remote, at, kSlotSize, RPMA_F_COMPLETION_ALWAYS, nullptr));
  RETURN_IF_FAILED(ExpectCompletion(conn, IBV_WC_RDMA_READ));
  if (memcmp(bytes.data(), bytes.data() + kSlotSize, kSlotSize) != 0)
    return "the bytes read back are not those written";
  EXPECT_RETURNS(0, rpma_mr_dereg(&mr));
  EXPECT_RETURNS(0, rpma_mr_remote_delete(&remote));
  return "";
}

Outcome DisconnectAndDelete(rpma_conn** conn) {
  EXPECT_RETURNS(0, rpma_conn_disconnect(*conn));
  RETURN_IF_FAILED(ExpectEvent(*conn, RPMA_CONN_CLOSED));
  EXPECT_RETURNS(0, rpma_conn_delete(conn));
  return "";
}

Outcome Accept(rpma_ep* ep, rpma_mr_local* mr, rpma_conn** conn) {
  int fd = -1;
  EXPECT_RETURNS(0, rpma_ep_get_fd(ep, &fd));
  if (!integration::WaitReadable(fd, kSafetyTimeoutMs)) return "no connection request came";
  rpma_conn_req* req = nullptr;
  EXPECT_RETURNS(0, rpma_ep_next_conn_req(ep, nullptr, &req));
  std::vector<uint8_t> descriptor;
  EXPECT_RETURNS(0, integration::GetDescriptor(mr, &descriptor));
  rpma_conn_private_data pdata{descriptor.data(), static_cast<uint8_t>(descriptor.size())};
  EXPECT_RETURNS(0, rpma_conn_req_connect(&req, &pdata, conn));
  return ExpectEvent(*conn, RPMA_CONN_ESTABLISHED);
}

Outcome ExpectInheritedRefused(ParentHandles* handles) {
  char scratch[64] = {};
  if (handles->peer != nullptr) {
    rpma_mr_local* mr = nullptr;
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_mr_reg(handles->peer, scratch, sizeof(scratch),
                                                RPMA_MR_USAGE_WRITE_DST, &mr));
    rpma_ep* ep = nullptr;
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_ep_listen(handles->peer, kLoopback, "0", &ep));
    rpma_conn_req* req = nullptr;
    EXPECT_RETURNS(RPMA_E_PROVIDER,
                   rpma_conn_req_new(handles->peer, kLoopback, "1", nullptr, &req));
    rpma_srq* srq = nullptr;
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_srq_new(handles->peer, nullptr, &srq));
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_sim_node_fail(handles->peer));
  }
  if (handles->ep != nullptr) {
    int fd = -1;
    EXPECT_RETURNS(RPMA_E_INVAL, rpma_ep_get_fd(handles->ep, &fd));
    rpma_conn_req* req = nullptr;
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_ep_next_conn_req(handles->ep, nullptr, &req));
  }
  rpma_mr_remote* remote = nullptr;
  if (handles->mr != nullptr) {
    // What the handle holds by value reads as in the parent.
    void* ptr = nullptr;
    EXPECT_RETURNS(0, rpma_mr_get_ptr(handles->mr, &ptr));
    std::vector<uint8_t> descriptor;
    EXPECT_RETURNS(0, integration::GetDescriptor(handles->mr, &descriptor));
    EXPECT_RETURNS(0,
                   rpma_mr_remote_from_descriptor(descriptor.data(), descriptor.size(), &remote));
    EXPECT_RETURNS(RPMA_E_PROVIDER,
                   rpma_mr_advise(handles->mr, 0, 8, IBV_ADVISE_MR_ADVICE_PREFETCH, 0));
  }
  if (handles->conn != nullptr) {
    rpma_conn* conn = handles->conn;
    uint32_t qp_num = 0;
    EXPECT_RETURNS(0, rpma_conn_get_qp_num(conn, &qp_num));
    rpma_cq* cq = nullptr;
    EXPECT_RETURNS(0, rpma_conn_get_cq(conn, &cq));
    ibv_wc wc;
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_cq_get_wc(cq, 1, &wc, nullptr));
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_cq_wait(cq));
    int fd = -1;
    EXPECT_RETURNS(RPMA_E_INVAL, rpma_cq_get_fd(cq, &fd));
    EXPECT_RETURNS(RPMA_E_INVAL, rpma_conn_get_event_fd(conn, &fd));
    rpma_conn_event event;
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_conn_next_event(conn, &event));
    if (remote != nullptr) {
      const int always = RPMA_F_COMPLETION_ALWAYS;
      EXPECT_RETURNS(RPMA_E_PROVIDER,
                     rpma_write(conn, remote, 0, handles->mr, 0, 8, always, nullptr));
      EXPECT_RETURNS(RPMA_E_PROVIDER,
                     rpma_read(conn, handles->mr, 0, remote, 0, 8, always, nullptr));
      EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_atomic_write(conn, remote, 0, scratch, always, nullptr));
      EXPECT_RETURNS(RPMA_E_PROVIDER,
                     rpma_flush(conn, remote, 0, 8, RPMA_FLUSH_TYPE_VISIBILITY, always, nullptr));
      EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_send(conn, handles->mr, 0, 8, always, nullptr));
      EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_recv(conn, handles->mr, 0, 8, nullptr));
    }
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_conn_disconnect(conn));
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_conn_delete(&handles->conn));
    if (handles->conn != nullptr) return "rpma_conn_delete left the parent's handle";
  }
  if (remote != nullptr) EXPECT_RETURNS(0, rpma_mr_remote_delete(&remote));
  if (handles->mr != nullptr) {
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_mr_dereg(&handles->mr));
    if (handles->mr != nullptr) return "rpma_mr_dereg left the parent's handle";
  }
  if (handles->ep != nullptr) {
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_ep_shutdown(&handles->ep));
    if (handles->ep != nullptr) return "rpma_ep_shutdown left the parent's handle";
  }
  if (handles->peer != nullptr) {
    EXPECT_RETURNS(RPMA_E_PROVIDER, rpma_peer_delete(&handles->peer));
    if (handles->peer != nullptr) return "rpma_peer_delete left the parent's handle";
  }
  return "";
}

Outcome ExpectNothingOfTheParentsOpen() {
  int sockets = integration::OpenSockets();
  if (sockets != 0) return "the child holds " + std::to_string(sockets) + " sockets";
  if (integration::MapsSharedMemorySegment()) return "the child maps a connection's segment";
  return "";
}

Outcome ConnectOnly(const std::string& port, rpma_peer** peer, rpma_conn** conn) {
  RETURN_IF_FAILED(NewPeer(RPMA_UTIL_IBV_CONTEXT_REMOTE, peer));
  rpma_conn_req* req = nullptr;
  EXPECT_RETURNS(0, rpma_conn_req_new(*peer, kLoopback, port.c_str(), nullptr, &req));
  EXPECT_RETURNS(0, rpma_conn_req_connect(&req, nullptr, conn));
  return ExpectEvent(*conn, RPMA_CONN_ESTABLISHED);
}

Outcome ConnectAndWrite(const std::string& port, uint8_t pattern, size_t slot,
                        bool expect_rejected) {
  rpma_peer* peer = nullptr;
  rpma_conn* conn = nullptr;
  if (expect_rejected) {
    RETURN_IF_FAILED(NewPeer(RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer));
    rpma_conn_req* req = nullptr;
    EXPECT_RETURNS(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req));
    EXPECT_RETURNS(0, rpma_conn_req_connect(&req, nullptr, &conn));
    RETURN_IF_FAILED(ExpectEvent(conn, RPMA_CONN_REJECTED));
    EXPECT_RETURNS(0, rpma_conn_delete(&conn));
  } else {
    RETURN_IF_FAILED(ConnectOnly(port, &peer, &conn));
    RETURN_IF_FAILED(WriteAndReadBack(peer, conn, pattern, slot));
    RETURN_IF_FAILED(DisconnectAndDelete(&conn));
  }
  EXPECT_RETURNS(0, rpma_peer_delete(&peer));
  return "";
}

Outcome InProcessExchange() {
  rpma_peer* peer = nullptr;
  RETURN_IF_FAILED(NewPeer(RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer));
  rpma_ep* ep = nullptr;
  std::string port;
  EXPECT_RETURNS(0, integration::ListenOnFreePort(peer, &ep, &port));
  std::vector<uint8_t> region(kRegionSize, 0);
  rpma_mr_local* mr = nullptr;
  EXPECT_RETURNS(0, rpma_mr_reg(peer, region.data(), region.size(),
                                RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &mr));
  rpma_conn_req* req = nullptr;
  EXPECT_RETURNS(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &req));
  rpma_conn* client = nullptr;
  EXPECT_RETURNS(0, rpma_conn_req_connect(&req, nullptr, &client));
  rpma_conn* server = nullptr;
  RETURN_IF_FAILED(Accept(ep, mr, &server));
  RETURN_IF_FAILED(ExpectEvent(client, RPMA_CONN_ESTABLISHED));
  RETURN_IF_FAILED(WriteAndReadBack(peer, client, 0x5a, 1));
  if (region[kSlotSize] != 0x5a) return "the in-process write did not land";
  RETURN_IF_FAILED(DisconnectAndDelete(&client));
  RETURN_IF_FAILED(ExpectEvent(server, RPMA_CONN_CLOSED));
  EXPECT_RETURNS(0, rpma_conn_delete(&server));
  EXPECT_RETURNS(0, rpma_mr_dereg(&mr));
  EXPECT_RETURNS(0, rpma_ep_shutdown(&ep));
  EXPECT_RETURNS(0, rpma_peer_delete(&peer));
  return "";
}

Outcome ServeOneClient(rpma_ep* ep, rpma_mr_local* mr) {
  rpma_conn* conn = nullptr;
  RETURN_IF_FAILED(Accept(ep, mr, &conn));
  RETURN_IF_FAILED(ExpectEvent(conn, RPMA_CONN_CLOSED));
  EXPECT_RETURNS(0, rpma_conn_delete(&conn));
  return "";
}

Outcome ChildOutcome(int pid, int fd, int timeout_ms) {
  std::string line;
  bool said = integration::ReadLine(fd, timeout_ms, &line);
  close(fd);
  if (!said) kill(pid, SIGKILL);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return "the child could not be reaped";
  if (!said) return "the child said nothing within " + std::to_string(timeout_ms) + " ms";
  if (!line.empty()) return "the child: " + line;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "the child ended with status " + std::to_string(status) + " after it succeeded";
  return "";
}

void SayOutcome(int fd, const Outcome& outcome) {
  std::string line = outcome + "\n";
  (void)integration::WriteAll(fd, line.data(), line.size());
}

}  // namespace forktest
