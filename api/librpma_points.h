// librpma_points.h -- the fault points (RPMA_FAULT_INJECTION=N) that librpma 1.3 passes
// inside its internal functions, in the order it passes them, for the public calls that
// reach them: connection-request set-up, CQs, connections, the flush helper, deleters.
//
// Each Points*() passes its points in librpma's order and returns 0, or the code of the one
// that fired after passing the points librpma's clean-up passes then (a clean-up that
// deletes a CQ passes rpma_cq_delete's). Deleters' points come after the work (librpma's
// are at the end): they return the first code that fired, and the work is done anyway.
// The public functions' own points are in the functions (api/fault_point.h).
#ifndef RPMA_SIM_API_LIBRPMA_POINTS_H_
#define RPMA_SIM_API_LIBRPMA_POINTS_H_

#include "api/fault_point.h"

namespace rpma_sim {
struct ConnectionConfig;
}

// Whether a CQ has a completion channel of its own or the connection's shared one.
enum class CqChannel { kShared, kOwn };
// Whether a connection request was made here or arrived from a client.
enum class RequestDirection { kOutgoing, kIncoming };

// rpma_info_new (resolving an address).
int PointsInfoNew();
// rpma_info_delete: passed at the end of every call that made an info; its code is ignored.
void PointsInfoDelete();
// rpma_cq_new: one more point when the CQ gets its own completion channel.
int PointsCqNew(CqChannel channel);
// rpma_cq_delete (at its end): the code it returns, 0 if its point did not fire.
int PointsCqDelete();
// rpma_conn_req_new_from_id: a request's CQ(s) and QP, for rpma_conn_req_new and
// rpma_ep_next_conn_req.
int PointsRequestFromId(const rpma_sim::ConnectionConfig& config, bool has_srq, bool srq_rcq);
// rpma_conn_new with its flush helper (librpma's portable one, an 8-byte region, unless the
// device flushes natively: RPMA_SIM_NATIVE_FLUSH).
int PointsConnNew();
// What rpma_conn_req_connect passes on its way: accepting (incoming) or connecting, and the
// connection (rpma_conn_new); when one fires, librpma's clean-up deletes the CQs it made
// (and, connecting, the connection), passing those deleters' points.
int PointsConnect(RequestDirection direction, bool has_rcq);
// What rpma_conn_req_delete passes after deleting a request (an incoming one: rejected).
int PointsRequestDelete(RequestDirection direction, bool has_rcq);
// What rpma_conn_delete passes after deleting a connection whose CQs have `channel`.
int PointsConnDelete(bool has_rcq, CqChannel channel);

#endif  // RPMA_SIM_API_LIBRPMA_POINTS_H_
