// malformed_peer_test.cc -- a raw TCP peer that sends what is not rpma-sim's protocol
// (sim/transport/PROTOCOL.md) to an endpoint's port.
//
// For each kind of garbage: the simulator must close that TCP connection (the raw socket sees
// end of file or an error within the safety timeout), the process must survive, no connection
// request may appear on the endpoint, and afterwards a normal client (over TCP: main() sets
// RPMA_SIM_TRANSPORT=tcp before any librpma call) connects to the same endpoint and does a
// write and a read.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <librpma.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/integration/integration_support.h"

using integration::kLoopback;
using integration::kSafetyTimeoutMs;
using integration::NextCompletion;
using integration::NextEvent;

namespace {

constexpr uint32_t kMagic = 0x4d535052;
constexpr uint16_t kVersion = 5;
constexpr uint16_t kDoorbell = 7;
constexpr uint16_t kHello = 1;
constexpr uint16_t kRequest = 5;

void PutLe(std::vector<uint8_t> *out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}

// A 16-byte frame header: magic, version, type, body length, reserved (little-endian).
std::vector<uint8_t> Header(uint32_t magic, uint16_t version, uint16_t type, uint32_t length) {
  std::vector<uint8_t> header;
  PutLe(&header, magic, 4);
  PutLe(&header, version, 2);
  PutLe(&header, type, 2);
  PutLe(&header, length, 4);
  PutLe(&header, 0, 4);
  return header;
}

struct Garbage {
  const char *name;
  std::vector<uint8_t> bytes;
};

std::vector<Garbage> AllGarbage() {
  std::vector<Garbage> all;

  std::mt19937 random(20240601);
  std::vector<uint8_t> noise(64);
  for (uint8_t &b : noise) b = static_cast<uint8_t>(random());
  noise[0] = 0x00;  // whatever the seed, not the magic
  all.push_back({"64_random_bytes", noise});

  all.push_back({"request_with_body_length_0xffffffff",
                 Header(kMagic, kVersion, kRequest, 0xFFFFFFFFu)});

  std::vector<uint8_t> hello = Header(kMagic, kVersion, kHello, 200);
  hello.resize(hello.size() + 200, 'x');
  all.push_back({"hello_with_200_bytes_of_private_data", hello});

  all.push_back({"hello_of_protocol_version_3", Header(kMagic, 3, kHello, 0)});
  all.push_back({"hello_of_protocol_version_5", Header(kMagic, 5, kHello, 0)});

  // HELLO bodies (PROTOCOL.md): private data length, private data, offer flag, offer.
  auto hello_with = [](const std::vector<uint8_t> &body) {
    std::vector<uint8_t> frame = Header(kMagic, kVersion, kHello, body.size());
    frame.insert(frame.end(), body.begin(), body.end());
    return frame;
  };
  all.push_back({"hello_without_its_offer_flag", hello_with({0})});
  all.push_back({"hello_whose_private_data_runs_past_the_body", hello_with({40, 'x', 'y'})});
  std::vector<uint8_t> long_name = {0, 1, 0};
  PutLe(&long_name, 42, 8);  // nonce
  long_name.push_back(100);  // name length over 64
  long_name.resize(long_name.size() + 100, 'a');
  all.push_back({"hello_offering_a_segment_name_of_100_bytes", hello_with(long_name)});
  // A well-formed offer that must be taken (required), naming a segment that is not
  // rpma-sim's: the server rejects and closes.
  std::vector<uint8_t> foreign = {0, 1, 1};
  PutLe(&foreign, 42, 8);
  const std::string name = "not-ours";
  foreign.push_back(static_cast<uint8_t>(name.size()));
  foreign.insert(foreign.end(), name.begin(), name.end());
  all.push_back({"hello_requiring_a_segment_that_is_not_ours", hello_with(foreign)});

  all.push_back({"unknown_frame_type_8", Header(kMagic, kVersion, 8, 0)});
  // A doorbell where no shared memory was agreed.
  all.push_back({"doorbell_before_hello", Header(kMagic, kVersion, kDoorbell, 0)});

  // A well-formed REQUEST (a write of 0 bytes) as the first frame, before any HELLO.
  std::vector<uint8_t> body;
  PutLe(&body, 1, 8);   // sequence
  PutLe(&body, 0, 1);   // opcode: write
  PutLe(&body, 0, 1);   // with_imm
  PutLe(&body, 0, 1);   // flush type
  PutLe(&body, 0, 1);   // reserved
  PutLe(&body, 0, 4);   // immediate data
  PutLe(&body, 1, 4);   // rkey
  PutLe(&body, 0, 8);   // remote address
  PutLe(&body, 0, 8);   // length
  PutLe(&body, 0, 8);   // atomic write value
  std::vector<uint8_t> request = Header(kMagic, kVersion, kRequest, body.size());
  request.insert(request.end(), body.begin(), body.end());
  all.push_back({"request_before_hello", request});

  return all;
}

class MalformedPeerTest : public ::testing::TestWithParam<Garbage> {
 protected:
  void SetUp() override {
    ibv_context *ibv_ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
    ASSERT_EQ(0, rpma_peer_new(ibv_ctx, &peer_));
    int ret = integration::ListenOnFreePort(peer_, &ep_, &port_);
    ASSERT_EQ(0, ret) << "rpma_ep_listen: " << rpma_err_2str(ret);
  }

  void TearDown() override {
    if (raw_ >= 0) close(raw_);
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  // Opens a plain TCP connection to the endpoint's port.
  void ConnectRaw() {
    raw_ = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(raw_, 0) << strerror(errno);
    sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_port = htons(static_cast<uint16_t>(atoi(port_.c_str())));
    ASSERT_EQ(1, inet_pton(AF_INET, kLoopback, &sin.sin_addr));
    ASSERT_EQ(0, connect(raw_, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)))
        << strerror(errno);
  }

  // Sends all of `bytes` on the raw socket (the simulator may close it early: EPIPE and
  // ECONNRESET end the sending but are no failure).
  void SendRaw(const std::vector<uint8_t> &bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = send(raw_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) return;
      ASSERT_GT(n, 0) << strerror(errno);
      sent += static_cast<size_t>(n);
    }
  }

  // Expects the simulator to close the raw connection within the safety timeout: recv returns
  // 0 or fails. Bytes it sends first are reported, not failed on.
  void ExpectRawClosed() {
    long long deadline = integration::NowMs() + kSafetyTimeoutMs;
    size_t received = 0;
    for (;;) {
      long long left = deadline - integration::NowMs();
      ASSERT_GT(left, 0) << "the simulator kept the connection open for " << kSafetyTimeoutMs
                         << " ms (" << received << " bytes received)";
      if (!integration::WaitReadable(raw_, static_cast<int>(left))) continue;
      uint8_t buffer[256];
      ssize_t n = recv(raw_, buffer, sizeof(buffer), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // end of file, or ECONNRESET
      received += static_cast<size_t>(n);
    }
    if (received > 0) printf("the simulator sent %zu bytes before closing\n", received);
  }

  // No connection request is waiting on the endpoint (its fd set to O_NONBLOCK).
  void ExpectNoConnReq() {
    int fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
    int flags = fcntl(fd, F_GETFL);
    ASSERT_GE(flags, 0);
    ASSERT_EQ(0, fcntl(fd, F_SETFL, flags | O_NONBLOCK));
    rpma_conn_req *req = nullptr;
    EXPECT_EQ(RPMA_E_NO_EVENT, rpma_ep_next_conn_req(ep_, nullptr, &req));
    if (req != nullptr) {
      EXPECT_EQ(0, rpma_conn_req_delete(&req));
    }
  }

  // A normal client connects to the endpoint, writes into the server's memory, reads it back
  // and disconnects.
  void ExpectNormalConnectionWorks() {
    static const char kText[] = "a normal client after the garbage";
    std::vector<char> server_mem(4096, 0);
    std::vector<char> client_mem(4096, 0);
    memcpy(client_mem.data(), kText, sizeof(kText));
    rpma_mr_local *server_mr = nullptr, *client_mr = nullptr;
    ASSERT_EQ(0, rpma_mr_reg(peer_, server_mem.data(), server_mem.size(),
                             RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &server_mr));
    ASSERT_EQ(0, rpma_mr_reg(peer_, client_mem.data(), client_mem.size(),
                             RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST, &client_mr));
    size_t desc_size = 0;
    ASSERT_EQ(0, rpma_mr_get_descriptor_size(server_mr, &desc_size));
    std::vector<uint8_t> desc(desc_size);
    ASSERT_EQ(0, rpma_mr_get_descriptor(server_mr, desc.data()));

    rpma_conn_req *client_req = nullptr;
    ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &client_req));
    rpma_conn *client = nullptr;
    ASSERT_EQ(0, rpma_conn_req_connect(&client_req, nullptr, &client));

    int ep_fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
    ASSERT_TRUE(integration::WaitReadable(ep_fd, kSafetyTimeoutMs))
        << "the normal client's request did not arrive within " << kSafetyTimeoutMs << " ms";
    rpma_conn_req *server_req = nullptr;
    ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &server_req));
    rpma_conn_private_data pdata = {desc.data(), static_cast<uint8_t>(desc.size())};
    rpma_conn *server = nullptr;
    ASSERT_EQ(0, rpma_conn_req_connect(&server_req, &pdata, &server));

    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, NextEvent(server, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
    ASSERT_EQ(0, NextEvent(client, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);

    rpma_conn_private_data got = {nullptr, 0};
    ASSERT_EQ(0, rpma_conn_get_private_data(client, &got));
    rpma_mr_remote *remote = nullptr;
    ASSERT_EQ(0, rpma_mr_remote_from_descriptor(got.ptr, got.len, &remote));
    rpma_cq *cq = nullptr;
    ASSERT_EQ(0, rpma_conn_get_cq(client, &cq));
    ibv_wc wc;

    ASSERT_EQ(0, rpma_write(client, remote, 128, client_mr, 0, sizeof(kText),
                            RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void *>(1)));
    ASSERT_EQ(0, NextCompletion(cq, kSafetyTimeoutMs, &wc));
    EXPECT_EQ(1u, wc.wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status) << ibv_wc_status_str(wc.status);
    EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
    EXPECT_STREQ(kText, server_mem.data() + 128);

    ASSERT_EQ(0, rpma_read(client, client_mr, 1024, remote, 128, sizeof(kText),
                           RPMA_F_COMPLETION_ALWAYS, reinterpret_cast<const void *>(2)));
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

  rpma_peer *peer_ = nullptr;
  rpma_ep *ep_ = nullptr;
  std::string port_;
  int raw_ = -1;
};

TEST_P(MalformedPeerTest, ConnectionClosedNoRequestThenNormalClientWorks) {
  ASSERT_NO_FATAL_FAILURE(ConnectRaw());
  ASSERT_NO_FATAL_FAILURE(SendRaw(GetParam().bytes));
  ASSERT_NO_FATAL_FAILURE(ExpectRawClosed());
  ASSERT_NO_FATAL_FAILURE(ExpectNoConnReq());
  ASSERT_NO_FATAL_FAILURE(ExpectNormalConnectionWorks());
}

INSTANTIATE_TEST_SUITE_P(Garbage, MalformedPeerTest, ::testing::ValuesIn(AllGarbage()),
                         [](const ::testing::TestParamInfo<Garbage> &info) {
                           return std::string(info.param.name);
                         });

}  // namespace

int main(int argc, char **argv) {
  // Before any librpma call: even the in-process client must use TCP (BUILD sets it too).
  setenv("RPMA_SIM_TRANSPORT", "tcp", 1);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
