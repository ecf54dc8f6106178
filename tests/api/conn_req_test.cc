// conn_req_test.cc -- rpma_conn_req_new/delete/connect/recv/get_private_data, every error code.
#include <librpma.h>

#include <string.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

// A value no implementation returns as a connection: shows that *conn_ptr was left untouched.
rpma_conn* const kUntouched = reinterpret_cast<rpma_conn*>(0x1);

std::vector<uint8_t> Pattern(size_t len, uint8_t seed) {
  std::vector<uint8_t> bytes(len);
  for (size_t i = 0; i < len; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 7);
  return bytes;
}

rpma_conn_private_data PrivateData(std::vector<uint8_t>* bytes) {
  rpma_conn_private_data pdata;
  pdata.ptr = bytes->data();
  pdata.len = static_cast<uint8_t>(bytes->size());
  return pdata;
}

class ConnReqTest : public PeerFixture {
 protected:
  void TearDown() override {
    if (mr_ != nullptr) {
      EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    }
    PeerFixture::TearDown();
  }

  // An outgoing request to 127.0.0.1:port_.
  void NewRequest(const rpma_conn_cfg* cfg, rpma_conn_req** req) {
    ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), cfg, req));
    ASSERT_NE(nullptr, *req);
  }

  // A client connects (with pdata) to the listening endpoint; *incoming is the server's request.
  void ClientConnects(const rpma_conn_private_data* pdata, rpma_conn** client,
                      rpma_conn_req** incoming) {
    rpma_conn_req* req = nullptr;
    ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, pdata, client));
    ASSERT_NE(nullptr, *client);
    ASSERT_NO_FATAL_FAILURE(NextConnReq(ep_, nullptr, incoming));
  }

  // The client's request was refused: it sees REJECTED, then disconnect (result ignored, as
  // example 01 does) and delete.
  void ExpectRejectedAndDelete(rpma_conn** client) {
    ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(*client, RPMA_CONN_REJECTED));
    (void)rpma_conn_disconnect(*client);
    ASSERT_EQ(0, rpma_conn_delete(client));
    ASSERT_EQ(nullptr, *client);
  }

  void RegisterRecvBuffer() {
    ASSERT_EQ(0, rpma_mr_reg(peer_, buf_, sizeof(buf_), RPMA_MR_USAGE_RECV, &mr_));
    ASSERT_NE(nullptr, mr_);
  }

  int EpFd() {
    int fd = -1;
    EXPECT_EQ(0, rpma_ep_get_fd(ep_, &fd));
    return fd;
  }

  // cfg_: a shared completion channel and srq_, an SRQ whose own receive CQ has `rcq_size`
  // entries (none for 0).
  void MakeSharedChannelWithSrq(uint32_t rcq_size) {
    ASSERT_EQ(0, rpma_srq_cfg_new(&srq_cfg_));
    ASSERT_EQ(0, rpma_srq_cfg_set_rcq_size(srq_cfg_, rcq_size));
    ASSERT_EQ(0, rpma_srq_new(peer_, srq_cfg_, &srq_));
    ASSERT_EQ(0, rpma_conn_cfg_new(&cfg_));
    ASSERT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg_, true));
    ASSERT_EQ(0, rpma_conn_cfg_set_srq(cfg_, srq_));
  }
  void DeleteSharedChannelWithSrq() {
    EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg_));
    EXPECT_EQ(0, rpma_srq_delete(&srq_));
    EXPECT_EQ(0, rpma_srq_cfg_delete(&srq_cfg_));
  }

  rpma_mr_local* mr_ = nullptr;
  char buf_[1024] = {};
  rpma_srq_cfg* srq_cfg_ = nullptr;
  rpma_srq* srq_ = nullptr;
  rpma_conn_cfg* cfg_ = nullptr;
};

// rpma_conn_req_new

TEST_F(ConnReqTest, NewNullPeer) {
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_new(nullptr, kLoopback, port_.c_str(), nullptr, &req));
  EXPECT_EQ(nullptr, req);
}

TEST_F(ConnReqTest, NewNullAddr) {
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_new(peer_, nullptr, port_.c_str(), nullptr, &req));
  EXPECT_EQ(nullptr, req);
}

TEST_F(ConnReqTest, NewNullPort) {
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_new(peer_, kLoopback, nullptr, nullptr, &req));
  EXPECT_EQ(nullptr, req);
}

TEST_F(ConnReqTest, NewNullReqPtr) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, nullptr));
}

TEST_F(ConnReqTest, NewUnresolvableHost) {
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_conn_req_new(peer_, "no-such-host.invalid", port_.c_str(), nullptr, &req));
  EXPECT_EQ(nullptr, req);
}

TEST_F(ConnReqTest, NewSharedChannelWithSrqThatHasItsOwnRcq) {
  ASSERT_NO_FATAL_FAILURE(MakeSharedChannelWithSrq(5));
  rpma_cq* srq_rcq = nullptr;
  ASSERT_EQ(0, rpma_srq_get_rcq(srq_, &srq_rcq));
  ASSERT_NE(nullptr, srq_rcq);

  rpma_conn_req* req = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), cfg_, &req));
  EXPECT_EQ(nullptr, req);
  DeleteSharedChannelWithSrq();
}

// The same check applies to an incoming request (librpma's rpma_conn_req_new_from_id
// serves both sides): INVAL, and the client is rejected.
TEST_F(ConnReqTest, NextConnReqSharedChannelWithSrqThatHasItsOwnRcq) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(MakeSharedChannelWithSrq(5));
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  rpma_conn_req* incoming = nullptr;
  ASSERT_TRUE(WaitReadable(EpFd(), kSafetyTimeoutMs));
  EXPECT_EQ(RPMA_E_INVAL, rpma_ep_next_conn_req(ep_, cfg_, &incoming));
  if (incoming != nullptr) {
    rpma_conn* server = nullptr;
    EXPECT_EQ(0, rpma_conn_req_connect(&incoming, nullptr, &server));
    ExpectNextEvent(client, RPMA_CONN_ESTABLISHED);
    CloseConnections(&client, &server);
  } else {
    ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
  }
  DeleteSharedChannelWithSrq();
}

TEST_F(ConnReqTest, NewSharedChannelWithSrqWithoutRcqIsAllowed) {
  ASSERT_NO_FATAL_FAILURE(MakeSharedChannelWithSrq(0));
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), cfg_, &req));
  EXPECT_NE(nullptr, req);
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
  DeleteSharedChannelWithSrq();
}

TEST_F(ConnReqTest, NewSucceedsWhenNobodyListens) {
  rpma_conn_req* req = nullptr;
  ASSERT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), nullptr, &req));
  EXPECT_NE(nullptr, req);
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
  EXPECT_EQ(nullptr, req);
}

TEST_F(ConnReqTest, NewWithConfig) {
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_rcq_size(cfg, 4));
  ASSERT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg, true));
  rpma_conn_req* req = nullptr;
  EXPECT_EQ(0, rpma_conn_req_new(peer_, kLoopback, port_.c_str(), cfg, &req));
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

// rpma_conn_req_delete

TEST_F(ConnReqTest, DeleteNullReqPtr) { EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_delete(nullptr)); }

TEST_F(ConnReqTest, DeleteNullReq) { ExpectDeleteOfNullObjectReturnsZero(rpma_conn_req_delete); }

TEST_F(ConnReqTest, DeleteIncomingRequestRejectsTheClient) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  EXPECT_EQ(0, rpma_conn_req_delete(&incoming));
  EXPECT_EQ(nullptr, incoming);
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

// rpma_conn_req_connect: argument checks

TEST_F(ConnReqTest, ConnectNullReqPtr) {
  rpma_conn* conn = kUntouched;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(nullptr, nullptr, &conn));
  EXPECT_EQ(kUntouched, conn);
}

TEST_F(ConnReqTest, ConnectNullReq) {
  rpma_conn_req* req = nullptr;
  rpma_conn* conn = kUntouched;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(&req, nullptr, &conn));
  EXPECT_EQ(kUntouched, conn);
}

TEST_F(ConnReqTest, ConnectNullConnPtrConsumesOutgoingRequest) {
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(&req, nullptr, nullptr));
  EXPECT_EQ(nullptr, req);
}

TEST_F(ConnReqTest, ConnectNullConnPtrConsumesAndRejectsIncomingRequest) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(&incoming, nullptr, nullptr));
  EXPECT_EQ(nullptr, incoming);
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

TEST_F(ConnReqTest, ConnectPrivateDataWithNullPtrConsumesOutgoingRequest) {
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  rpma_conn_private_data pdata;
  pdata.ptr = nullptr;
  pdata.len = 8;
  rpma_conn* conn = kUntouched;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(&req, &pdata, &conn));
  EXPECT_EQ(nullptr, req);
  EXPECT_EQ(kUntouched, conn);
}

TEST_F(ConnReqTest, ConnectPrivateDataWithZeroLenConsumesOutgoingRequest) {
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  char byte = 'x';
  rpma_conn_private_data pdata;
  pdata.ptr = &byte;
  pdata.len = 0;
  rpma_conn* conn = kUntouched;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(&req, &pdata, &conn));
  EXPECT_EQ(nullptr, req);
  EXPECT_EQ(kUntouched, conn);
}

TEST_F(ConnReqTest, ConnectPrivateDataWithNullPtrConsumesAndRejectsIncomingRequest) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  rpma_conn_private_data pdata;
  pdata.ptr = nullptr;
  pdata.len = 8;
  rpma_conn* server = kUntouched;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(&incoming, &pdata, &server));
  EXPECT_EQ(nullptr, incoming);
  EXPECT_EQ(kUntouched, server);
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

TEST_F(ConnReqTest, ConnectPrivateDataWithZeroLenConsumesAndRejectsIncomingRequest) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  char byte = 'x';
  rpma_conn_private_data pdata;
  pdata.ptr = &byte;
  pdata.len = 0;
  rpma_conn* server = kUntouched;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_connect(&incoming, &pdata, &server));
  EXPECT_EQ(nullptr, incoming);
  EXPECT_EQ(kUntouched, server);
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

// rpma_conn_req_connect: private-data limits (56 bytes on connect, 196 on accept)

TEST_F(ConnReqTest, ConnectClientPrivateData57BytesIsTooLong) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  std::vector<uint8_t> bytes = Pattern(57, 1);
  rpma_conn_private_data pdata = PrivateData(&bytes);
  rpma_conn* conn = kUntouched;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_connect(&req, &pdata, &conn));
  EXPECT_EQ(nullptr, req);
  EXPECT_EQ(kUntouched, conn);
}

TEST_F(ConnReqTest, ConnectClientPrivateData56BytesReachesTheServer) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  std::vector<uint8_t> bytes = Pattern(56, 3);
  const std::vector<uint8_t> sent = bytes;
  rpma_conn_private_data pdata = PrivateData(&bytes);
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(&pdata, &client, &incoming));

  rpma_conn_private_data got = {nullptr, 0};
  ASSERT_EQ(0, rpma_conn_req_get_private_data(incoming, &got));
  ASSERT_EQ(56, got.len);
  ASSERT_NE(nullptr, got.ptr);
  EXPECT_EQ(0, memcmp(sent.data(), got.ptr, 56));

  rpma_conn* server = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming, nullptr, &server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(server, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
}

TEST_F(ConnReqTest, ConnectServerPrivateData197BytesIsTooLong) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  std::vector<uint8_t> bytes = Pattern(197, 5);
  rpma_conn_private_data pdata = PrivateData(&bytes);
  rpma_conn* server = kUntouched;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_connect(&incoming, &pdata, &server));
  EXPECT_EQ(nullptr, incoming);
  EXPECT_EQ(kUntouched, server);
  // The incoming request was consumed, i.e. rejected.
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

TEST_F(ConnReqTest, ConnectServerPrivateData196BytesReachesTheClient) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  std::vector<uint8_t> bytes = Pattern(196, 9);
  const std::vector<uint8_t> sent = bytes;
  rpma_conn_private_data pdata = PrivateData(&bytes);
  rpma_conn* server = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming, &pdata, &server));
  EXPECT_EQ(nullptr, incoming);
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(server, RPMA_CONN_ESTABLISHED));

  rpma_conn_private_data got = {nullptr, 0};
  ASSERT_EQ(0, rpma_conn_get_private_data(client, &got));
  ASSERT_EQ(196, got.len);
  ASSERT_NE(nullptr, got.ptr);
  EXPECT_EQ(0, memcmp(sent.data(), got.ptr, 196));
  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&server, &client));
}

TEST_F(ConnReqTest, ConnectToPortNobodyListensOnIsRejected) {
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  EXPECT_EQ(nullptr, req);
  ASSERT_NE(nullptr, client);
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

// rpma_conn_req_recv

TEST_F(ConnReqTest, RecvNullReq) {
  ASSERT_NO_FATAL_FAILURE(RegisterRecvBuffer());
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_recv(nullptr, mr_, 0, 8, this));
}

TEST_F(ConnReqTest, RecvNullDst) {
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_recv(req, nullptr, 0, 8, this));
  // Unlike rpma_recv, a 0-byte receive (dst NULL, offset 0, len 0) is INVAL here too.
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_recv(req, nullptr, 0, 0, this));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_recv(req, nullptr, 0, 0, nullptr));
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
}

TEST_F(ConnReqTest, RecvNullOpContextIsAllowed) {
  ASSERT_NO_FATAL_FAILURE(RegisterRecvBuffer());
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  EXPECT_EQ(0, rpma_conn_req_recv(req, mr_, 0, 8, nullptr));
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
}

TEST_F(ConnReqTest, RecvMoreThanDefaultRqSize) {
  ASSERT_NO_FATAL_FAILURE(RegisterRecvBuffer());
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  for (int i = 0; i < 10; ++i) {  // default rq_size
    EXPECT_EQ(0, rpma_conn_req_recv(req, mr_, i * 8, 8, nullptr)) << "receive #" << i;
  }
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_recv(req, mr_, 80, 8, nullptr));
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
}

TEST_F(ConnReqTest, RecvMoreThanConfiguredRqSizeOnIncomingRequest) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(RegisterRecvBuffer());
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_rq_size(cfg, 3));

  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  rpma_conn* client = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &client));
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(NextConnReq(ep_, cfg, &incoming));
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(0, rpma_conn_req_recv(incoming, mr_, i * 8, 8, nullptr)) << "receive #" << i;
  }
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_recv(incoming, mr_, 24, 8, nullptr));
  EXPECT_EQ(0, rpma_conn_req_delete(&incoming));
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
}

TEST_F(ConnReqTest, RecvOnRequestUsingSrqFails) {
  ASSERT_NO_FATAL_FAILURE(RegisterRecvBuffer());
  rpma_srq* srq = nullptr;
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq));
  rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_srq(cfg, srq));
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(cfg, &req));
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_conn_req_recv(req, mr_, 0, 8, nullptr));
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  EXPECT_EQ(0, rpma_srq_delete(&srq));
}

TEST_F(ConnReqTest, RecvPostedOnIncomingRequestReceivesTheFirstMessage) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  ASSERT_NO_FATAL_FAILURE(RegisterRecvBuffer());
  static const char kMessage[] = "hello from the client";
  char send_buf[sizeof(kMessage)];
  memcpy(send_buf, kMessage, sizeof(kMessage));
  rpma_mr_local* send_mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(peer_, send_buf, sizeof(send_buf), RPMA_MR_USAGE_SEND, &send_mr));

  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  int context = 0;
  ASSERT_EQ(0, rpma_conn_req_recv(incoming, mr_, 64, 100, &context));
  rpma_conn* server = nullptr;
  ASSERT_EQ(0, rpma_conn_req_connect(&incoming, nullptr, &server));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(client, RPMA_CONN_ESTABLISHED));
  ASSERT_NO_FATAL_FAILURE(ExpectNextEvent(server, RPMA_CONN_ESTABLISHED));

  ASSERT_EQ(0, rpma_send(client, send_mr, 0, sizeof(send_buf), RPMA_F_COMPLETION_ALWAYS, nullptr));
  rpma_cq* cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(server, &cq));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(WaitForCompletion(cq, &wc)) << "no receive completion";
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(IBV_WC_RECV, wc.opcode);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&context), wc.wr_id);
  EXPECT_EQ(sizeof(kMessage), wc.byte_len);
  EXPECT_EQ(0, memcmp(kMessage, buf_ + 64, sizeof(kMessage)));

  // The client's send completion.
  rpma_cq* client_cq = nullptr;
  ASSERT_EQ(0, rpma_conn_get_cq(client, &client_cq));
  int client_cq_fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(client_cq, &client_cq_fd));
  ASSERT_TRUE(WaitReadable(client_cq_fd, kSafetyTimeoutMs)) << "no send completion";
  ASSERT_EQ(0, rpma_cq_wait(client_cq));
  ASSERT_EQ(0, rpma_cq_get_wc(client_cq, 1, &wc, nullptr));
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(IBV_WC_SEND, wc.opcode);

  ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  EXPECT_EQ(0, rpma_mr_dereg(&send_mr));
}

// rpma_conn_req_get_private_data

TEST_F(ConnReqTest, GetPrivateDataNullReq) {
  rpma_conn_private_data pdata = {nullptr, 0};
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_get_private_data(nullptr, &pdata));
}

TEST_F(ConnReqTest, GetPrivateDataNullPdata) {
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_req_get_private_data(req, nullptr));
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
}

TEST_F(ConnReqTest, GetPrivateDataIsACopyOfTheClientsBytes) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  std::vector<uint8_t> bytes = Pattern(28, 11);
  const std::vector<uint8_t> sent = bytes;
  rpma_conn_private_data pdata = PrivateData(&bytes);
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(&pdata, &client, &incoming));
  // The client may reuse its buffer once rpma_conn_req_connect returned.
  memset(bytes.data(), 0xEE, bytes.size());

  rpma_conn_private_data got = {nullptr, 0};
  ASSERT_EQ(0, rpma_conn_req_get_private_data(incoming, &got));
  ASSERT_EQ(28, got.len);
  ASSERT_NE(nullptr, got.ptr);
  EXPECT_NE(static_cast<void*>(bytes.data()), got.ptr);
  EXPECT_EQ(0, memcmp(sent.data(), got.ptr, sent.size()));

  EXPECT_EQ(0, rpma_conn_req_delete(&incoming));
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

TEST_F(ConnReqTest, GetPrivateDataWhenNoneWasSent) {
  ASSERT_NO_FATAL_FAILURE(Listen());
  rpma_conn* client = nullptr;
  rpma_conn_req* incoming = nullptr;
  ASSERT_NO_FATAL_FAILURE(ClientConnects(nullptr, &client, &incoming));
  rpma_conn_private_data got;
  got.ptr = this;
  got.len = 99;
  ASSERT_EQ(0, rpma_conn_req_get_private_data(incoming, &got));
  EXPECT_EQ(nullptr, got.ptr);
  EXPECT_EQ(0, got.len);
  EXPECT_EQ(0, rpma_conn_req_delete(&incoming));
  ASSERT_NO_FATAL_FAILURE(ExpectRejectedAndDelete(&client));
}

TEST_F(ConnReqTest, GetPrivateDataOfOutgoingRequestIsEmpty) {
  rpma_conn_req* req = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewRequest(nullptr, &req));
  rpma_conn_private_data got;
  got.ptr = this;
  got.len = 99;
  ASSERT_EQ(0, rpma_conn_req_get_private_data(req, &got));
  EXPECT_EQ(nullptr, got.ptr);
  EXPECT_EQ(0, got.len);
  EXPECT_EQ(0, rpma_conn_req_delete(&req));
}

}  // namespace
