// connect_route.h -- how a connection request travels, decided once per rdma_connect from
// the transport setting (RPMA_SIM_TRANSPORT, rpma_sim_set_transport) and the destination,
// and how a server answers a client's offer of shared memory.
#ifndef RPMA_SIM_CM_CONNECT_ROUTE_H_
#define RPMA_SIM_CM_CONNECT_ROUTE_H_

#include "sim/fabric/address.h"
#include "sim/fabric/config.h"

namespace rpma_sim {

// What the client offers the server for the data path, over the TCP connection.
enum class SegmentOffer {
  kNone,     // TCP carries the data too
  kOffered,  // a segment if one can be made; without one (no /dev/shm left) TCP carries it
  // Auto: offered if the destination is an address of this host, else none. Settled by
  // OfferTo once the request leaves the process (finding out takes system calls, which a
  // connect to a listener of this process need not make).
  kOfferedToThisHost,
  kRequired,  // a segment, or the connect fails (a forced shm connection)
};

struct ConnectRoute {
  // Whether a listener of this process is looked for first (and used if found).
  bool in_process_first = false;
  // Whether the request ends there: no listener of this process is a rejection.
  bool in_process_only = false;
  // Otherwise it goes over TCP, with this offer.
  SegmentOffer segment = SegmentOffer::kNone;
};

// The route of a connection under `transport` (auto: in process if this process listens
// there, else shared memory to an address of this host, else TCP).
ConnectRoute RouteFor(TransportKind transport);

// The offer a request that leaves the process makes to `destination`: `planned`, with
// kOfferedToThisHost settled to kOffered or kNone.
SegmentOffer OfferTo(SegmentOffer planned, const SocketAddress& destination);

// Whether a server whose setting is `transport` takes a client's offer of a segment: a
// server forced to tcp declines one the client does not require.
bool TakesSegmentOffer(TransportKind transport, bool required);

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CONNECT_ROUTE_H_
