// raw_handshake.cc -- a raw peer's valid handshake with a server that accepts it.
#include "tests/integration/raw_handshake.h"

#include <gtest/gtest.h>

#include "tests/common/kept_log.h"
#include "tests/integration/integration_support.h"

namespace raw_peer {

void ListeningServer(rpma_peer** peer, rpma_ep** ep, std::string* port) {
  ForgetLoggedLines();
  ASSERT_EQ(0, rpma_log_set_function(KeepLogLine));
  ibv_context* ibv_ctx = nullptr;
  ASSERT_EQ(
      0, rpma_utils_get_ibv_context(integration::kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
  ASSERT_EQ(0, rpma_peer_new(ibv_ctx, peer));
  int ret = integration::ListenOnFreePort(*peer, ep, port);
  ASSERT_EQ(0, ret) << "rpma_ep_listen: " << rpma_err_2str(ret);
}

void AcceptedHandshake(PeerWire* wire, const std::vector<uint8_t>& offer, rpma_ep* ep,
                       const rpma_mr_local* mr, rpma_conn** conn, Accepted* accepted) {
  std::vector<uint8_t> hello = {0};  // no private data
  hello.insert(hello.end(), offer.begin(), offer.end());
  PutLe(&hello, 0x686f7374696c65, 8);  // the peer's node id
  ASSERT_NO_FATAL_FAILURE(wire->Send(Frame(kHello, hello)));
  int ep_fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(ep, &ep_fd));
  ASSERT_TRUE(integration::WaitReadable(ep_fd, integration::kSafetyTimeoutMs));
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_ep_next_conn_req(ep, nullptr, &req));
  std::vector<uint8_t> desc;
  ASSERT_EQ(0, integration::GetDescriptor(mr, &desc));
  ASSERT_EQ(21u, desc.size());
  rpma_conn_private_data pdata = {desc.data(), static_cast<uint8_t>(desc.size())};
  ASSERT_EQ(0, rpma_conn_req_connect(&req, &pdata, conn));
  uint16_t type = 0;
  std::vector<uint8_t> body;
  ASSERT_NO_FATAL_FAILURE(wire->ReadFrame(&type, &body));
  ASSERT_EQ(kAccept, type);
  // Private data (its length, then the descriptor), the segment taken or not, a node id.
  ASSERT_EQ(1 + 21 + 1 + 8u, body.size());
  ASSERT_EQ(21, body[0]);
  auto le = [&](size_t at, int bytes) {
    uint64_t value = 0;
    for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(body[at + i]) << (8 * i);
    return value;
  };
  accepted->address = le(1, 8);
  accepted->length = le(9, 8);
  accepted->rkey = static_cast<uint32_t>(le(17, 4));
  accepted->took_segment = body[22] == 1;
}

}  // namespace raw_peer
