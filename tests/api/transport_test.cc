// transport_test.cc -- rpma_sim_set_transport / rpma_sim_get_transport: every error code, and
// that the setting decides how the connections made afterwards travel (as RPMA_SIM_TRANSPORT),
// read once per connect.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "sim/cm/connect_gate.h"
#include "tests/common/test_support.h"
#include "tests/integration/integration_support.h"

namespace {

// Puts back, at the end of a test, the transport it started with (RPMA_SIM_TRANSPORT's).
class TransportTest : public PairFixture {
 protected:
  void SetUp() override { ASSERT_EQ(0, rpma_sim_get_transport(&initial_)); }
  void TearDown() override {
    PairFixture::TearDown();
    EXPECT_EQ(0, rpma_sim_set_transport(initial_));
  }

  rpma_sim_transport initial_ = RPMA_SIM_TRANSPORT_AUTO;
};

TEST_F(TransportTest, GetWithNullIsInvalid) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_get_transport(nullptr));
}

TEST_F(TransportTest, SetOfAnUnknownTransportIsInvalidAndChangesNothing) {
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_TCP));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_set_transport(static_cast<rpma_sim_transport>(4)));
  EXPECT_EQ(RPMA_E_INVAL, rpma_sim_set_transport(static_cast<rpma_sim_transport>(-1)));
  rpma_sim_transport transport = RPMA_SIM_TRANSPORT_AUTO;
  ASSERT_EQ(0, rpma_sim_get_transport(&transport));
  EXPECT_EQ(RPMA_SIM_TRANSPORT_TCP, transport);
}

TEST_F(TransportTest, GetReturnsWhatWasSet) {
  for (rpma_sim_transport set : {RPMA_SIM_TRANSPORT_AUTO, RPMA_SIM_TRANSPORT_INPROC,
                                 RPMA_SIM_TRANSPORT_SHM, RPMA_SIM_TRANSPORT_TCP}) {
    ASSERT_EQ(0, rpma_sim_set_transport(set));
    rpma_sim_transport got = static_cast<rpma_sim_transport>(-1);
    ASSERT_EQ(0, rpma_sim_get_transport(&got));
    EXPECT_EQ(set, got);
  }
}

// The listener's socket alone in process; a TCP connection adds one socket on each side.
TEST_F(TransportTest, TcpConnectionsTravelOverSocketsEvenWithinOneProcess) {
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_INPROC));
  ASSERT_NO_FATAL_FAILURE(pair_.Listen());
  const int listening = integration::OpenSockets();
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_EQ(listening, integration::OpenSockets()) << "an in-process connection opened sockets";
  ASSERT_NO_FATAL_FAILURE(pair_.Teardown());
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_TCP));
  ASSERT_NO_FATAL_FAILURE(pair_.Listen());
  const int listening_again = integration::OpenSockets();
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_LE(listening_again + 2, integration::OpenSockets())
      << "a TCP connection opened no sockets";
  EXPECT_FALSE(integration::MapsSharedMemorySegment());
}

TEST_F(TransportTest, ShmConnectionsMapASegmentEvenWithinOneProcess) {
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM));
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  EXPECT_TRUE(integration::MapsSharedMemorySegment());
}

// A connection keeps the transport it was made with: one made under SHM still maps its
// segment, and carries a write, after the setting changed to INPROC.
TEST_F(TransportTest, ConnectionsKeepTheTransportTheyWereMadeWith) {
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM));
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_INPROC));
  Buffer* target = Register(64, RPMA_MR_USAGE_WRITE_DST, 0);
  Buffer* source = Register(64, RPMA_MR_USAGE_WRITE_SRC, 7);
  rpma_mr_remote* remote = regs_.RemoteOf(target);
  ASSERT_EQ(
      0, rpma_write(pair_.client, remote, 0, source->mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(source->bytes, target->bytes);
  EXPECT_TRUE(integration::MapsSharedMemorySegment());
}

// Changes the transport setting as a connect passes the connect seam (after the connect
// read the setting, before it chose how to carry the connection).
class SwitchTransportGate : public rpma_sim::ConnectGate {
 public:
  explicit SwitchTransportGate(rpma_sim_transport to) : to_(to) {}
  rpma_sim::ConnectVerdict Check(rpma_sim::ConnectionSide side) override {
    if (side == rpma_sim::ConnectionSide::kClient) EXPECT_EQ(0, rpma_sim_set_transport(to_));
    return rpma_sim::ConnectVerdict::kProceed;
  }

 private:
  const rpma_sim_transport to_;
};

// The setting is read once per connect: a change while a connect is under way (here, from
// the connect seam itself) does not send a connection forced to shm over tcp.
TEST_F(TransportTest, AConnectReadsTheSettingOnce) {
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM));
  rpma_sim::SetConnectGate(std::make_shared<SwitchTransportGate>(RPMA_SIM_TRANSPORT_TCP));
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  rpma_sim::SetConnectGate(nullptr);
  EXPECT_TRUE(integration::MapsSharedMemorySegment()) << "the connection went over tcp";
  rpma_sim_transport now = RPMA_SIM_TRANSPORT_AUTO;
  ASSERT_EQ(0, rpma_sim_get_transport(&now));
  EXPECT_EQ(RPMA_SIM_TRANSPORT_TCP, now);  // the gate did change it
}

}  // namespace
