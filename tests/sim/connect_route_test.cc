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
  ConnectRoute route = RouteFor(TransportKind::kAuto);
  EXPECT_TRUE(route.in_process_first);
  EXPECT_FALSE(route.in_process_only);
  // Settled only when the request leaves the process.
  EXPECT_EQ(SegmentOffer::kOfferedToThisHost, route.segment);
  EXPECT_EQ(SegmentOffer::kOffered, OfferTo(route.segment, Address("127.0.0.1")));
  EXPECT_EQ(SegmentOffer::kNone, OfferTo(route.segment, Address("192.0.2.1")));
}

TEST(ConnectRouteTest, InprocNeverLeavesTheProcess) {
  ConnectRoute route = RouteFor(TransportKind::kInproc);
  EXPECT_TRUE(route.in_process_first);
  EXPECT_TRUE(route.in_process_only);
}

TEST(ConnectRouteTest, ShmRequiresASegmentEvenToAListenerOfThisProcess) {
  ConnectRoute route = RouteFor(TransportKind::kShm);
  EXPECT_FALSE(route.in_process_first);
  EXPECT_FALSE(route.in_process_only);
  for (const char* host : {"127.0.0.1", "192.0.2.1"})
    EXPECT_EQ(SegmentOffer::kRequired, OfferTo(route.segment, Address(host))) << host;
}

TEST(ConnectRouteTest, TcpOffersNothing) {
  ConnectRoute route = RouteFor(TransportKind::kTcp);
  EXPECT_FALSE(route.in_process_first);
  for (const char* host : {"127.0.0.1", "192.0.2.1"})
    EXPECT_EQ(SegmentOffer::kNone, OfferTo(route.segment, Address(host))) << host;
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
