// hostile_server_test.cc -- the simulator as the CLIENT of a hostile server: a raw TCP socket
// of the test that speaks the wire protocol by hand (PROTOCOL.md). hostile_peer_test lies
// only to a server; what a server tells a client is checked here:
// - a RESPONSE that answers a read carried over TCP (not by reference) with no bytes at all,
//   alone or together with a write before it, is a response of the wrong length:
//   IBV_WC_BAD_RESP_ERR, the buffer untouched; one that answers more requests than are
//   under way ends the connection;
// - a REQUEST before the ACCEPT ends the connect (PROTOCOL.md: "a REQUEST before the
//   connection was accepted"), though the client bound its queue pair to the link before
//   its HELLO;
// - a HELLO never answered ends the connect, unreachable, after 5 s.
#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <librpma.h>
#include <netinet/in.h>
#include <rpma_sim.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/integration/integration_support.h"
#include "tests/integration/raw_peer.h"

namespace {

using integration::kLoopback;
using integration::kSafetyTimeoutMs;
using raw_peer::Frame;
using raw_peer::PutLe;

// A listening raw socket on 127.0.0.1 and the one connection it accepts.
class RawServer {
 public:
  ~RawServer() {
    if (conn_ >= 0) close(conn_);
    if (listen_ >= 0) close(listen_);
  }

  void Listen(std::string* port) {
    listen_ = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listen_, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    ASSERT_EQ(1, inet_pton(AF_INET, kLoopback, &sin.sin_addr));
    ASSERT_EQ(0, bind(listen_, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)));
    ASSERT_EQ(0, listen(listen_, 4));
    socklen_t length = sizeof(sin);
    ASSERT_EQ(0, getsockname(listen_, reinterpret_cast<sockaddr*>(&sin), &length));
    *port = std::to_string(ntohs(sin.sin_port));
  }

  void Accept() {
    ASSERT_TRUE(integration::WaitReadable(listen_, kSafetyTimeoutMs));
    conn_ = accept(listen_, nullptr, nullptr);
    ASSERT_GE(conn_, 0) << strerror(errno);
  }

  void ReadFrame(uint16_t* type, std::vector<uint8_t>* body) {
    std::vector<uint8_t> bytes;
    size_t want = raw_peer::kHeaderSize;
    long long deadline = integration::NowMs() + kSafetyTimeoutMs;
    while (bytes.size() < want) {
      long long left = deadline - integration::NowMs();
      ASSERT_GT(left, 0) << "no whole frame from the client";
      if (!integration::WaitReadable(conn_, static_cast<int>(left))) continue;
      uint8_t buffer[4096];
      ssize_t n = recv(conn_, buffer, std::min(sizeof(buffer), want - bytes.size()), 0);
      ASSERT_GT(n, 0) << "the client closed the connection";
      bytes.insert(bytes.end(), buffer, buffer + n);
      if (bytes.size() == raw_peer::kHeaderSize && want == raw_peer::kHeaderSize) {
        uint32_t length = 0;
        for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(bytes[8 + i]) << (8 * i);
        want += length;
      }
    }
    *type = static_cast<uint16_t>(bytes[6] | bytes[7] << 8);
    body->assign(bytes.begin() + raw_peer::kHeaderSize, bytes.end());
  }

  void Send(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(static_cast<ssize_t>(bytes.size()),
              send(conn_, bytes.data(), bytes.size(), MSG_NOSIGNAL));
  }

  // The client closes the connection within the safety timeout; frames it sends first are
  // told, not failed on.
  void ExpectClosed() {
    long long deadline = integration::NowMs() + kSafetyTimeoutMs;
    for (;;) {
      long long left = deadline - integration::NowMs();
      ASSERT_GT(left, 0) << "the client kept the connection open for " << kSafetyTimeoutMs << " ms";
      if (!integration::WaitReadable(conn_, static_cast<int>(left))) continue;
      uint8_t header[raw_peer::kHeaderSize];
      ssize_t n = recv(conn_, header, sizeof(header), MSG_WAITALL);
      if (n <= 0) return;
      if (n == static_cast<ssize_t>(sizeof(header))) {
        uint32_t length = 0;
        for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(header[8 + i]) << (8 * i);
        std::vector<uint8_t> body(length);
        if (length > 0 && recv(conn_, body.data(), length, MSG_WAITALL) <= 0) return;
        uint32_t status =
            body.size() >= 12
                ? (body[8] | body[9] << 8 | body[10] << 16 | static_cast<uint32_t>(body[11]) << 24)
                : 0;
        printf("the client sent a frame of type %u (status field %u) instead of closing\n",
               header[6] | header[7] << 8, status);
      }
    }
  }

  void CloseConnection() {
    if (conn_ >= 0) close(conn_);
    conn_ = -1;
  }

 private:
  int listen_ = -1;
  int conn_ = -1;
};

class HostileServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_TCP));
    ibv_context* ibv_ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
    ASSERT_EQ(0, rpma_peer_new(ibv_ctx, &peer_));
    ASSERT_NO_FATAL_FAILURE(server_.Listen(&port_));
  }

  void TearDown() override {
    server_.CloseConnection();  // the client's connection ends, whatever its state
    if (conn_ != nullptr) {
      rpma_conn_disconnect(conn_);
      EXPECT_EQ(0, rpma_conn_delete(&conn_));
    }
    if (remote_ != nullptr) EXPECT_EQ(0, rpma_mr_remote_delete(&remote_));
    if (src_mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&src_mr_));
    if (dst_mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&dst_mr_));
    if (cfg_ != nullptr) EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg_));
    if (peer_ != nullptr) EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  // The client connects; the raw server takes its TCP connection and its HELLO.
  void ConnectAndTakeHello(int timeout_ms) {
    ASSERT_EQ(0, rpma_conn_cfg_new(&cfg_));
    ASSERT_EQ(0, rpma_conn_cfg_set_timeout(cfg_, timeout_ms));
    rpma_conn_req* req = nullptr;
    ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), cfg_, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &conn_));
    ASSERT_NO_FATAL_FAILURE(server_.Accept());
    uint16_t type = 0;
    std::vector<uint8_t> body;
    ASSERT_NO_FATAL_FAILURE(server_.ReadFrame(&type, &body));
    ASSERT_EQ(raw_peer::kHello, type);
  }

  // Connects, ACCEPTs it (no private data, no shared memory, a node id), and describes a
  // region of this process as the "remote" one (any region's descriptor serves).
  void Establish() {
    ASSERT_NO_FATAL_FAILURE(ConnectAndTakeHello(1000));
    std::vector<uint8_t> accept = {0, 0};
    PutLe(&accept, 0x736572766572, 8);
    ASSERT_NO_FATAL_FAILURE(server_.Send(Frame(raw_peer::kAccept, accept)));
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(conn_, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
    memset(src_, 'S', sizeof(src_));
    memset(dst_, 'd', sizeof(dst_));
    ASSERT_EQ(0, rpma_mr_reg(peer_, src_, sizeof(src_),
                             RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST, &src_mr_));
    ASSERT_EQ(0, rpma_mr_reg(peer_, dst_, sizeof(dst_),
                             RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC, &dst_mr_));
    std::vector<uint8_t> desc;
    ASSERT_EQ(0, integration::GetDescriptor(src_mr_, &desc));
    ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), desc.size(), &remote_));
  }

  // Reads the next frame at the server: a REQUEST of `opcode` (0 write, 1 read), carried.
  void TakeRequest(uint8_t opcode, std::vector<uint8_t>* request) {
    uint16_t type = 0;
    ASSERT_NO_FATAL_FAILURE(server_.ReadFrame(&type, request));
    ASSERT_EQ(raw_peer::kRequest, type);
    ASSERT_GE(request->size(), 44u);
    ASSERT_EQ(opcode, (*request)[8]);
    ASSERT_EQ(0, (*request)[11] & 1) << "carried, not by reference";
  }

  // RESPONSE to `request`: success, no bytes, answering `before` requests before it too.
  void Answer(const std::vector<uint8_t>& request, uint32_t before) {
    std::vector<uint8_t> response(request.begin(), request.begin() + 8);
    PutLe(&response, IBV_WC_SUCCESS, 4);
    PutLe(&response, before, 4);
    ASSERT_NO_FATAL_FAILURE(server_.Send(Frame(raw_peer::kResponse, response)));
  }

  void NextCompletion(ibv_wc* wc) {
    rpma_cq* cq = nullptr;
    ASSERT_EQ(0, rpma_conn_get_cq(conn_, &cq));
    ASSERT_EQ(0, integration::NextCompletion(cq, kSafetyTimeoutMs, wc));
  }

  char src_[4096];
  char dst_[4096];
  rpma_peer* peer_ = nullptr;
  rpma_conn_cfg* cfg_ = nullptr;
  rpma_conn* conn_ = nullptr;
  rpma_mr_local* src_mr_ = nullptr;
  rpma_mr_local* dst_mr_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  RawServer server_;
  std::string port_;
};

TEST_F(HostileServerTest, AReadAnsweredWithoutItsBytesIsABadResponse) {
  ASSERT_NO_FATAL_FAILURE(Establish());
  ASSERT_EQ(0, rpma_read(conn_, dst_mr_, 0, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         reinterpret_cast<const void*>(7)));
  std::vector<uint8_t> request;
  ASSERT_NO_FATAL_FAILURE(TakeRequest(1, &request));
  // RESPONSE: the read's sequence, IBV_WC_SUCCESS, none before it; and none of the 64 bytes.
  ASSERT_NO_FATAL_FAILURE(Answer(request, 0));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(NextCompletion(&wc));
  EXPECT_EQ(7u, wc.wr_id);
  EXPECT_EQ(IBV_WC_BAD_RESP_ERR, wc.status)
      << "a 64-byte read answered with 0 bytes completed with " << ibv_wc_status_str(wc.status)
      << " (byte_len " << wc.byte_len << "); the destination still holds '" << dst_[0] << "'";
}

// One RESPONSE may answer several requests (PROTOCOL.md), each as if by a RESPONSE of its own
// without bytes: the write before the read succeeds, and the read, which expected its bytes,
// is a response of the wrong length.
TEST_F(HostileServerTest, AReadAnsweredTogetherWithAWriteIsABadResponse) {
  ASSERT_NO_FATAL_FAILURE(Establish());
  ASSERT_EQ(0, rpma_write(conn_, remote_, 0, dst_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                          reinterpret_cast<const void*>(6)));
  ASSERT_EQ(0, rpma_read(conn_, dst_mr_, 0, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         reinterpret_cast<const void*>(7)));
  std::vector<uint8_t> write, read;
  ASSERT_NO_FATAL_FAILURE(TakeRequest(0, &write));
  ASSERT_NO_FATAL_FAILURE(TakeRequest(1, &read));
  ASSERT_NO_FATAL_FAILURE(Answer(read, 1));  // and the one before it
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(NextCompletion(&wc));
  EXPECT_EQ(6u, wc.wr_id);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status) << ibv_wc_status_str(wc.status);
  ASSERT_NO_FATAL_FAILURE(NextCompletion(&wc));
  EXPECT_EQ(7u, wc.wr_id);
  EXPECT_EQ(IBV_WC_BAD_RESP_ERR, wc.status) << ibv_wc_status_str(wc.status);
}

// A RESPONSE that answers more requests than are under way is no RC responder's: the client
// closes the connection.
TEST_F(HostileServerTest, AResponseForMoreRequestsThanAreUnderWayEndsTheConnection) {
  ASSERT_NO_FATAL_FAILURE(Establish());
  ASSERT_EQ(0, rpma_write(conn_, remote_, 0, dst_mr_, 0, 64, RPMA_F_COMPLETION_ALWAYS, nullptr));
  std::vector<uint8_t> write;
  ASSERT_NO_FATAL_FAILURE(TakeRequest(0, &write));
  ASSERT_NO_FATAL_FAILURE(Answer(write, 1));  // a request before the only one
  ASSERT_NO_FATAL_FAILURE(server_.ExpectClosed());
}

// A server that takes the HELLO and never answers it (a port where something else listens,
// a stuck server): on rdma_cm the request ends once the CM's retries run out. Here the
// client closes after WireConnection::kAnswerTimeoutMs (5 s): RPMA_CONN_UNREACHABLE.
TEST_F(HostileServerTest, AServerThatNeverAnswersTheHelloDoesNotHoldTheConnectForever) {
  ASSERT_NO_FATAL_FAILURE(ConnectAndTakeHello(100));
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  int ret = integration::NextEvent(conn_, kSafetyTimeoutMs, &event);
  ASSERT_EQ(0, ret) << "no connection event within " << kSafetyTimeoutMs
                    << " ms of a HELLO the server never answered: " << rpma_err_2str(ret);
  EXPECT_EQ(RPMA_CONN_UNREACHABLE, event) << rpma_utils_conn_event_2str(event);
}

// The server sends a REQUEST before its ACCEPT: the client closes the connection, answering
// nothing.
TEST_F(HostileServerTest, ARequestBeforeTheAcceptEndsTheConnect) {
  ASSERT_NO_FATAL_FAILURE(ConnectAndTakeHello(1000));
  std::vector<uint8_t> write;
  PutLe(&write, 0, 8);  // sequence
  PutLe(&write, 0, 4);  // write, no immediate, persistent, no flags
  PutLe(&write, 0, 4);  // immediate data
  PutLe(&write, 1, 4);  // rkey
  PutLe(&write, 0x1000, 8);
  PutLe(&write, 0, 8);  // length 0
  PutLe(&write, 0, 8);  // atomic value
  ASSERT_NO_FATAL_FAILURE(server_.Send(Frame(raw_peer::kRequest, write)));
  ASSERT_NO_FATAL_FAILURE(server_.ExpectClosed());
}

}  // namespace
