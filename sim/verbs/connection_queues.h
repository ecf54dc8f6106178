// connection_queues.h -- the verbs resources librpma creates for one connection.
//
// A completion queue (cq_size), an optional receive CQ (rcq_size > 0), their completion
// channels (one each, or one shared by both), and the RC queue pair (sq_size, rq_size,
// optionally attached to an SRQ). Created by a connection request, moved into the
// connection when it is accepted or connected.
#ifndef RPMA_SIM_VERBS_CONNECTION_QUEUES_H_
#define RPMA_SIM_VERBS_CONNECTION_QUEUES_H_

#include <memory>

#include "sim/verbs/completion_queue.h"
#include "sim/verbs/queue_pair.h"
#include "sim/verbs/shared_receive_queue.h"

namespace rpma_sim {

// The sizes and options of rpma_conn_cfg, with librpma's defaults.
struct ConnectionConfig {
  int timeout_ms = 1000;
  uint32_t cq_size = 10;
  uint32_t rcq_size = 0;
  uint32_t sq_size = 10;
  uint32_t rq_size = 10;
  bool shared_channel = false;
  std::shared_ptr<SharedReceiveQueue> srq;
};

struct ConnectionQueues {
  std::shared_ptr<CompletionChannel> shared_channel;  // nullptr unless config.shared_channel
  std::shared_ptr<CompletionQueue> cq;
  std::shared_ptr<CompletionQueue> rcq;  // nullptr unless rcq_size > 0 (and no SRQ RCQ)
  std::shared_ptr<QueuePair> qp;

  // Creates the queues; every CQ starts armed, as librpma arms them at creation. kProvider
  // when a size is 0 where verbs needs one (cq) or above the device's limits.
  static Status Create(const std::shared_ptr<ProtectionDomain>& pd, const ConnectionConfig& config,
                       ConnectionQueues* queues);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_CONNECTION_QUEUES_H_
