// Tests of a connection's route (sim/cm/connect_route): what each transport setting looks
// for first, what it offers the server, and which offers a server takes.
#include "sim/cm/connect_route.h"

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

SocketAddress Address(const char* host) {
  SocketAddress address;
  EXPECT_EQ(Status::kOk, ResolveAddress(host, "7204", AddressUse::kConnect, &address)) << host;
  return address;
}

// 192.0.2.0/24 (TEST-NET-1) is never an address of this host.
TEST(ConnectRouteTest, AutoLooksInProcessThenOffersShmOnlyToThisHost) {
  ConnectRoute local = RouteFor(TransportKind::kAuto, Address("127.0.0.1"));
  EXPECT_TRUE(local.in_process_first);
  EXPECT_FALSE(local.in_process_only);
  EXPECT_EQ(SegmentOffer::kOffered, local.segment);
  ConnectRoute remote = RouteFor(TransportKind::kAuto, Address("192.0.2.1"));
  EXPECT_TRUE(remote.in_process_first);
  EXPECT_EQ(SegmentOffer::kNone, remote.segment);
}

TEST(ConnectRouteTest, InprocNeverLeavesTheProcess) {
  ConnectRoute route = RouteFor(TransportKind::kInproc, Address("127.0.0.1"));
  EXPECT_TRUE(route.in_process_first);
  EXPECT_TRUE(route.in_process_only);
}

TEST(ConnectRouteTest, ShmRequiresASegmentEvenToAListenerOfThisProcess) {
  for (const char* host : {"127.0.0.1", "192.0.2.1"}) {
    ConnectRoute route = RouteFor(TransportKind::kShm, Address(host));
    EXPECT_FALSE(route.in_process_first) << host;
    EXPECT_FALSE(route.in_process_only) << host;
    EXPECT_EQ(SegmentOffer::kRequired, route.segment) << host;
  }
}

TEST(ConnectRouteTest, TcpOffersNothing) {
  ConnectRoute route = RouteFor(TransportKind::kTcp, Address("127.0.0.1"));
  EXPECT_FALSE(route.in_process_first);
  EXPECT_EQ(SegmentOffer::kNone, route.segment);
}

TEST(ConnectRouteTest, AServerForcedToTcpDeclinesOnlyOffersNotRequired) {
  EXPECT_FALSE(TakesSegmentOffer(TransportKind::kTcp, /*required=*/false));
  EXPECT_TRUE(TakesSegmentOffer(TransportKind::kTcp, /*required=*/true));
  for (TransportKind transport :
       {TransportKind::kAuto, TransportKind::kInproc, TransportKind::kShm})
    EXPECT_TRUE(TakesSegmentOffer(transport, /*required=*/false));
}

}  // namespace
}  // namespace rpma_sim
