// connect_route.cc -- the one place the transport setting turns into a connection's route.
#include "sim/cm/connect_route.h"

namespace rpma_sim {

ConnectRoute RouteFor(TransportKind transport) {
  ConnectRoute route;
  switch (transport) {
    case TransportKind::kInproc:
      route.in_process_first = true;
      route.in_process_only = true;
      break;
    case TransportKind::kAuto:
      route.in_process_first = true;
      route.segment = SegmentOffer::kOfferedToThisHost;
      break;
    case TransportKind::kShm:
      route.segment = SegmentOffer::kRequired;
      break;
    case TransportKind::kTcp:
      break;
  }
  return route;
}

SegmentOffer OfferTo(SegmentOffer planned, const SocketAddress& destination) {
  if (planned != SegmentOffer::kOfferedToThisHost) return planned;
  return HostOwnsAddress(destination) ? SegmentOffer::kOffered : SegmentOffer::kNone;
}

bool TakesSegmentOffer(TransportKind transport, bool required) {
  return required || transport != TransportKind::kTcp;
}

}  // namespace rpma_sim
