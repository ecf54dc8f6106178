// connection_queues.cc -- building a connection's CQs, channels and queue pair.
#include "sim/verbs/connection_queues.h"

namespace rpma_sim {

ConnectionQueues ConnectionQueues::Create(const std::shared_ptr<ProtectionDomain>& pd,
                                          const ConnectionConfig& config) {
  ConnectionQueues queues;
  if (config.shared_channel) queues.shared_channel = std::make_shared<CompletionChannel>();
  auto channel_for_cq = [&] {
    return queues.shared_channel ? queues.shared_channel : std::make_shared<CompletionChannel>();
  };
  queues.cq = std::make_shared<CompletionQueue>(config.cq_size, channel_for_cq());
  queues.cq->Arm();
  if (config.rcq_size > 0) {
    queues.rcq = std::make_shared<CompletionQueue>(config.rcq_size, channel_for_cq());
    queues.rcq->Arm();
  }
  QueuePairConfig qp_config;
  qp_config.send_cq = queues.cq;
  qp_config.recv_cq = queues.rcq ? queues.rcq : queues.cq;
  qp_config.srq = config.srq;
  qp_config.sq_size = config.sq_size;
  qp_config.rq_size = config.rq_size;
  queues.qp = std::make_shared<QueuePair>(pd, std::move(qp_config));
  queues.qp->AttachToSharedReceiveQueue();
  return queues;
}

}  // namespace rpma_sim
