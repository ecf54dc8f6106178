// receive_request.h -- builds a simulator receive request from rpma_*_recv arguments.
#ifndef RPMA_SIM_API_RECEIVE_REQUEST_H_
#define RPMA_SIM_API_RECEIVE_REQUEST_H_

#include <librpma.h>

#include "api/types.h"
#include "sim/verbs/receive_queue.h"

inline rpma_sim::ReceiveRequest MakeReceiveRequest(const struct rpma_mr_local* dst, size_t offset,
                                                   size_t len, const void* op_context) {
  rpma_sim::ReceiveRequest request;
  request.wr_id = reinterpret_cast<uint64_t>(op_context);
  if (dst != nullptr) request.region = dst->region;
  request.offset = offset;
  request.length = len;
  return request;
}

#endif  // RPMA_SIM_API_RECEIVE_REQUEST_H_
