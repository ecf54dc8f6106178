// malformed_peer_test.cc -- a raw TCP peer that sends what is not rpma-sim's protocol
// (sim/transport/PROTOCOL.md) to an endpoint's port.
//
// For each kind of garbage: the simulator must close that TCP connection (the raw socket sees
// end of file or an error within the safety timeout), the process must survive, no connection
// request may appear on the endpoint, and afterwards a normal client (over TCP: main() sets
// RPMA_SIM_TRANSPORT=tcp before any librpma call) connects to the same endpoint and does a
// write and a read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <librpma.h>
#include <stdlib.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/integration/integration_support.h"
#include "tests/integration/raw_peer.h"

using integration::kLoopback;
using raw_peer::Header;
using raw_peer::kDoorbell;
using raw_peer::kHello;
using raw_peer::kMagic;
using raw_peer::kRequest;
using raw_peer::kVersion;
using raw_peer::PutLe;

namespace {

struct Garbage {
  const char* name;
  std::vector<uint8_t> bytes;
};

std::vector<Garbage> AllGarbage() {
  std::vector<Garbage> all;

  std::mt19937 random(20240601);
  std::vector<uint8_t> noise(64);
  for (uint8_t& b : noise) b = static_cast<uint8_t>(random());
  noise[0] = 0x00;  // whatever the seed, not the magic
  all.push_back({"64_random_bytes", noise});

  all.push_back(
      {"request_with_body_length_0xffffffff", Header(kMagic, kVersion, kRequest, 0xFFFFFFFFu)});

  std::vector<uint8_t> hello = Header(kMagic, kVersion, kHello, 200);
  hello.resize(hello.size() + 200, 'x');
  all.push_back({"hello_with_200_bytes_of_private_data", hello});

  all.push_back({"hello_of_protocol_version_3", Header(kMagic, 3, kHello, 0)});
  all.push_back({"hello_of_protocol_version_5", Header(kMagic, 5, kHello, 0)});

  // HELLO bodies (PROTOCOL.md): private data length, private data, offer flag, offer.
  auto hello_with = [](const std::vector<uint8_t>& body) {
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

  all.push_back({"unknown_frame_type_9", Header(kMagic, kVersion, 9, 0)});
  all.push_back({"placed_before_hello", Header(kMagic, kVersion, raw_peer::kPlaced, 0)});
  // A doorbell where no shared memory was agreed.
  all.push_back({"doorbell_before_hello", Header(kMagic, kVersion, kDoorbell, 0)});

  // A well-formed REQUEST (a write of 0 bytes) as the first frame, before any HELLO.
  raw_peer::Request write;
  write.sequence = 1;
  write.rkey = 1;
  std::vector<uint8_t> request = raw_peer::Frame(kRequest, raw_peer::RequestBody(write));
  all.push_back({"request_before_hello", request});

  return all;
}

class MalformedPeerTest : public ::testing::TestWithParam<Garbage> {
 protected:
  void SetUp() override {
    ibv_context* ibv_ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
    ASSERT_EQ(0, rpma_peer_new(ibv_ctx, &peer_));
    int ret = integration::ListenOnFreePort(peer_, &ep_, &port_);
    ASSERT_EQ(0, ret) << "rpma_ep_listen: " << rpma_err_2str(ret);
  }

  void TearDown() override {
    raw_.Close();
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  // No connection request is waiting on the endpoint (its fd set to O_NONBLOCK).
  void ExpectNoConnReq() {
    int fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &fd));
    int flags = fcntl(fd, F_GETFL);
    ASSERT_GE(flags, 0);
    ASSERT_EQ(0, fcntl(fd, F_SETFL, flags | O_NONBLOCK));
    rpma_conn_req* req = nullptr;
    EXPECT_EQ(RPMA_E_NO_EVENT, rpma_ep_next_conn_req(ep_, nullptr, &req));
    if (req != nullptr) {
      EXPECT_EQ(0, rpma_conn_req_delete(&req));
    }
  }

  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  raw_peer::RawPeer raw_;
};

TEST_P(MalformedPeerTest, ConnectionClosedNoRequestThenNormalClientWorks) {
  ASSERT_NO_FATAL_FAILURE(raw_.Connect(port_));
  ASSERT_NO_FATAL_FAILURE(raw_.Send(GetParam().bytes));
  ASSERT_NO_FATAL_FAILURE(raw_.ExpectClosed());
  ASSERT_NO_FATAL_FAILURE(ExpectNoConnReq());
  ASSERT_NO_FATAL_FAILURE(raw_peer::ExpectNormalConnectionWorks(peer_, ep_, port_));
}

INSTANTIATE_TEST_SUITE_P(Garbage, MalformedPeerTest, ::testing::ValuesIn(AllGarbage()),
                         [](const ::testing::TestParamInfo<Garbage>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace

int main(int argc, char** argv) {
  // Before any librpma call: even the in-process client must use TCP (BUILD sets it too).
  setenv("RPMA_SIM_TRANSPORT", "tcp", 1);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
