// raw_peer.cc -- frames built by hand, a raw TCP peer, and the normal client that follows.
#include "tests/integration/raw_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/integration/integration_support.h"

namespace raw_peer {

using integration::kLoopback;
using integration::kSafetyTimeoutMs;

void PutLe(std::vector<uint8_t>* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

std::vector<uint8_t> Header(uint32_t magic, uint16_t version, uint16_t type, uint32_t length) {
  std::vector<uint8_t> header;
  PutLe(&header, magic, 4);
  PutLe(&header, version, 2);
  PutLe(&header, type, 2);
  PutLe(&header, length, 4);
  PutLe(&header, 0, 4);
  return header;
}

std::vector<uint8_t> Frame(uint16_t type, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> frame = Header(kMagic, kVersion, type, static_cast<uint32_t>(body.size()));
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

std::vector<uint8_t> RequestBody(const Request& request) {
  std::vector<uint8_t> body;
  PutLe(&body, request.sequence, 8);
  PutLe(&body, request.opcode, 1);
  PutLe(&body, request.with_imm, 1);
  PutLe(&body, request.flush_type, 1);
  PutLe(&body, request.flags, 1);
  PutLe(&body, request.imm, 4);
  PutLe(&body, request.rkey, 4);
  PutLe(&body, request.address, 8);
  PutLe(&body, request.length, 8);
  PutLe(&body, request.atomic_value, 8);
  body.insert(body.end(), request.bytes.begin(), request.bytes.end());
  return body;
}

RawPeer::~RawPeer() { Close(); }

void RawPeer::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

void RawPeer::Connect(const std::string& port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd_, 0) << strerror(errno);
  // A small receive buffer: what the simulator sends and this peer does not read stays on
  // the simulator's side sooner (a peer that never reads its answers; the kernel's default
  // maximum could otherwise take megabytes of them).
  int receive_buffer = 64 << 10;
  ASSERT_EQ(0, setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer)));
  sockaddr_in sin;
  memset(&sin, 0, sizeof(sin));
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<uint16_t>(atoi(port.c_str())));
  ASSERT_EQ(1, inet_pton(AF_INET, kLoopback, &sin.sin_addr));
  ASSERT_EQ(0, connect(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof(sin))) << strerror(errno);
}

void RawPeer::Send(const std::vector<uint8_t>& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return;
    ASSERT_GT(n, 0) << strerror(errno);
    sent += static_cast<size_t>(n);
  }
}

void RawPeer::ReadFrame(uint16_t* type, std::vector<uint8_t>* body) {
  long long deadline = integration::NowMs() + kSafetyTimeoutMs;
  std::vector<uint8_t> bytes;
  size_t want = kHeaderSize;
  while (bytes.size() < want) {
    long long left = deadline - integration::NowMs();
    ASSERT_GT(left, 0) << "no whole frame within " << kSafetyTimeoutMs << " ms";
    if (!integration::WaitReadable(fd_, static_cast<int>(left))) continue;
    uint8_t buffer[4096];
    size_t room = std::min(sizeof(buffer), want - bytes.size());
    ssize_t n = recv(fd_, buffer, room, 0);
    if (n < 0 && errno == EINTR) continue;
    ASSERT_GT(n, 0) << "the simulator closed the connection instead of answering";
    bytes.insert(bytes.end(), buffer, buffer + n);
    if (bytes.size() == kHeaderSize && want == kHeaderSize) {
      uint32_t length = 0;
      for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(bytes[8 + i]) << (8 * i);
      want += length;
    }
  }
  *type = static_cast<uint16_t>(bytes[6] | bytes[7] << 8);
  body->assign(bytes.begin() + kHeaderSize, bytes.end());
}

void RawPeer::ExpectClosed() {
  long long deadline = integration::NowMs() + kSafetyTimeoutMs;
  size_t received = 0;
  for (;;) {
    long long left = deadline - integration::NowMs();
    ASSERT_GT(left, 0) << "the simulator kept the connection open for " << kSafetyTimeoutMs
                       << " ms (" << received << " bytes received)";
    if (!integration::WaitReadable(fd_, static_cast<int>(left))) continue;
    uint8_t buffer[256];
    ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of file, or ECONNRESET
    received += static_cast<size_t>(n);
  }
  if (received > 0) printf("the simulator sent %zu bytes before closing\n", received);
}

void ExpectNormalConnectionWorks(rpma_peer* peer, rpma_ep* ep, const std::string& port) {
  using integration::NextCompletion;
  using integration::NextEvent;
  static const char kText[] = "a normal client after the bad one";
  std::vector<char> server_mem(4096, 0);
  std::vector<char> client_mem(4096, 0);
  memcpy(client_mem.data(), kText, sizeof(kText));
  rpma_mr_local *server_mr = nullptr, *client_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer, server_mem.data(), server_mem.size(),
                           RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &server_mr));
  ASSERT_EQ(0, rpma_mr_reg(peer, client_mem.data(), client_mem.size(),
                           RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &client_mr));
  std::vector<uint8_t> desc;
  ASSERT_EQ(0, integration::GetDescriptor(server_mr, &desc));

  rpma_conn_req* client_req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer, kLoopback, port.c_str(), nullptr, &client_req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&client_req, nullptr, &client));

  int ep_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep, &ep_fd));
  ASSERT_TRUE(integration::WaitReadable(ep_fd, kSafetyTimeoutMs))
      << "the normal client's request did not arrive within " << kSafetyTimeoutMs << " ms";
  rpma_conn_req* server_req = nullptr;
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep, nullptr, &server_req));
  rpma_conn_private_data pdata = {desc.data(), static_cast<uint8_t>(desc.size())};
  rpma_conn* server = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&server_req, &pdata, &server));

  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_EQ(0, NextEvent(server, kSafetyTimeoutMs, &event));
  ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
  ASSERT_EQ(0, NextEvent(client, kSafetyTimeoutMs, &event));
  ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);

  rpma_conn_private_data got = {nullptr, 0};
  ASSERT_EQ(0, rpma_conn_get_private_data(client, &got));
  rpma_mr_remote* remote = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(got.ptr, got.len, &remote));
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(client, &cq));
  ibv_wc wc;

  ASSERT_EQ(0, rpma_write(client, remote, 128, client_mr, 0, sizeof(kText),
                          RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void*>(1)));
  ASSERT_EQ(0, NextCompletion(cq, kSafetyTimeoutMs, &wc));
  EXPECT_EQ(1u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
  EXPECT_STREQ(kText, server_mem.data() + 128);

  ASSERT_EQ(0, rpma_read(client, client_mr, 1024, remote, 128, sizeof(kText),
                         RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void*>(2)));
  ASSERT_EQ(0, NextCompletion(cq, kSafetyTimeoutMs, &wc));
  EXPECT_EQ(2u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status) << ibv_wc_status_str(wc.status);
  EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
  EXPECT_STREQ(kText, client_mem.data() + 1024);

  ASSERT_EQ(0, rpma_conn_disconnect(client));
  ASSERT_EQ(0, NextEvent(client, kSafetyTimeoutMs, &event));
  EXPECT_EQ(RPMA_CONN_CLOSED, event);
  ASSERT_EQ(0, NextEvent(server, kSafetyTimeoutMs, &event));
  EXPECT_EQ(RPMA_CONN_CLOSED, event);
  EXPECT_EQ(0, rpma_conn_disconnect(server));
  EXPECT_EQ(0, rpma_conn_delete(&client));
  EXPECT_EQ(0, rpma_conn_delete(&server));
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
  EXPECT_EQ(0, rpma_mr_dereg(&client_mr));
  EXPECT_EQ(0, rpma_mr_dereg(&server_mr));
}

}  // namespace raw_peer
