// side_setup.cc -- setting up and taking down one side of the kit's connected pair.
#include "testing/side_setup.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

namespace rpma_sim {
namespace testing {
namespace {

constexpr size_t kPageSize = 4096;

std::string ToHex(const std::vector<uint8_t>& bytes) {
  std::string hex;
  char digits[3];
  for (uint8_t byte : bytes) {
    snprintf(digits, sizeof(digits), "%02x", byte);
    hex += digits;
  }
  return hex;
}

std::vector<uint8_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<uint8_t>(strtoul(hex.substr(i, 2).c_str(), nullptr, 16)));
  return bytes;
}

}  // namespace

void NewPeer(rpma_peer** peer) {
  ibv_context* device = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &device));
  ASSERT_EQ(0, rpma_peer_new(device, peer));
}

std::string FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr;
  memset(&addr, 0, sizeof(addr));
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bool bound = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
               getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  return bound ? std::to_string(ntohs(addr.sin_port)) : "";
}

void NewConnCfg(const PairOptions& options, rpma_conn_cfg** cfg) {
  *cfg = nullptr;
  if (options.sq_size == 0 && options.rq_size == 0 && options.cq_size == 0 && options.rcq_size == 0)
    return;
  ASSERT_EQ(0, rpma_conn_cfg_new(cfg));
  if (options.sq_size != 0) {
    ASSERT_EQ(0, rpma_conn_cfg_set_sq_size(*cfg, options.sq_size));
  }
  if (options.rq_size != 0) {
    ASSERT_EQ(0, rpma_conn_cfg_set_rq_size(*cfg, options.rq_size));
  }
  if (options.cq_size != 0) {
    ASSERT_EQ(0, rpma_conn_cfg_set_cq_size(*cfg, options.cq_size));
  }
  if (options.rcq_size != 0) {
    ASSERT_EQ(0, rpma_conn_cfg_set_rcq_size(*cfg, options.rcq_size));
  }
}

void ConnectRequest(const PairOptions& options,
                    const std::function<int(const rpma_conn_cfg*, rpma_conn_req**)>& make,
                    const std::string& private_data, rpma_conn** conn) {
  // librpma's private data has a u8 length: more cannot be sent, and is not cut.
  ASSERT_LE(private_data.size(), 255u)
      << "private data of " << private_data.size() << " bytes: librpma sends at most 255";
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewConnCfg(options, &cfg));
  rpma_conn_req* request = nullptr;
  int ret = make(cfg, &request);
  if (cfg != nullptr) {
    EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  }
  ASSERT_EQ(0, ret);
  rpma_conn_private_data pdata;
  pdata.ptr = const_cast<char*>(private_data.data());
  pdata.len = static_cast<uint8_t>(private_data.size());
  ASSERT_EQ(0, rpma_conn_req_connect(&request, pdata.len > 0 ? &pdata : nullptr, conn));
}

void RegisterMemory(Side* side, size_t size, int usage) {
  void* memory = nullptr;
  ASSERT_EQ(0, posix_memalign(&memory, kPageSize, size > 0 ? size : 1));
  memset(memory, 0, size);
  side->memory = static_cast<uint8_t*>(memory);
  side->size = size;
  ASSERT_EQ(0, rpma_mr_reg(side->peer, side->memory, size, usage, &side->mr));
  ASSERT_EQ(0, rpma_conn_get_cq(side->conn, &side->cq));
  ASSERT_EQ(0, rpma_conn_get_rcq(side->conn, &side->rcq));
}

void DescribeMemory(const Side& side, std::string* hex) {
  size_t size = 0;
  ASSERT_EQ(0, rpma_mr_get_descriptor_size(side.mr, &size));
  std::vector<uint8_t> descriptor(size);
  ASSERT_EQ(0, rpma_mr_get_descriptor(side.mr, descriptor.data()));
  *hex = ToHex(descriptor);
}

void LearnRemote(Side* side, const std::string& hex) {
  std::vector<uint8_t> descriptor = FromHex(hex);
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(descriptor.data(), descriptor.size(), &side->remote));
}

void DescribePeerCfg(std::string* hex) {
  rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_new(&cfg));
  EXPECT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg, true));
  size_t size = 0;
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor_size(cfg, &size));
  std::vector<uint8_t> descriptor(size);
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor(cfg, descriptor.data()));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
  *hex = ToHex(descriptor);
}

void ApplyPeerCfg(rpma_conn* conn, const std::string& hex) {
  std::vector<uint8_t> descriptor = FromHex(hex);
  rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(descriptor.data(), descriptor.size(), &cfg));
  EXPECT_EQ(0, rpma_conn_apply_remote_peer_cfg(conn, cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

void EndConnection(Side* side) {
  if (side->conn == nullptr || ConnectionEnded(side->conn)) return;
  ASSERT_EQ(0, rpma_conn_disconnect(side->conn));
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_EQ(0, NextConnEvent(side->conn, &event)) << "the connection did not end";
  ASSERT_TRUE(event == RPMA_CONN_CLOSED || event == RPMA_CONN_LOST)
      << "the connection ended with " << rpma_utils_conn_event_2str(event);
}

void ReleaseSide(Side* side, bool check) {
  int results[] = {
      side->remote != nullptr ? rpma_mr_remote_delete(&side->remote) : 0,
      side->mr != nullptr ? rpma_mr_dereg(&side->mr) : 0,
      side->conn != nullptr ? (ForgetConnection(side->conn), rpma_conn_delete(&side->conn)) : 0,
  };
  free(side->memory);
  side->memory = nullptr;
  side->cq = side->rcq = nullptr;
  if (!check) return;
  for (int result : results) EXPECT_EQ(0, result) << rpma_err_2str(result);
}

}  // namespace testing
}  // namespace rpma_sim
