// connection_queues.cc -- building a connection's CQs, channels and queue pair.
#include "sim/verbs/connection_queues.h"

#include "sim/common/log.h"
#include "sim/fabric/device.h"

namespace rpma_sim {

Status ConnectionQueues::Create(const std::shared_ptr<ProtectionDomain>& pd,
                                const ConnectionConfig& config, ConnectionQueues* out) {
  if (config.cq_size == 0 || config.cq_size > kMaxCompletionQueueEntries ||
      config.rcq_size > kMaxCompletionQueueEntries) {
    SIM_LOG_ERROR("ibv_create_cq(%u, %u): Invalid argument", config.cq_size, config.rcq_size);
    return Status::kProvider;
  }
  if (config.sq_size > kMaxQueuePairWorkRequests || config.rq_size > kMaxQueuePairWorkRequests) {
    SIM_LOG_ERROR("ibv_create_qp(sq %u, rq %u): Invalid argument", config.sq_size, config.rq_size);
    return Status::kProvider;
  }
  ConnectionQueues queues;
  if (config.shared_channel) queues.shared_channel = std::make_shared<CompletionChannel>();
  auto channel_for_cq = [&] {
    return queues.shared_channel ? queues.shared_channel : std::make_shared<CompletionChannel>();
  };
  queues.cq = std::make_shared<CompletionQueue>(config.cq_size, channel_for_cq());
  queues.cq->Arm();
  // An SRQ with its own receive CQ takes every receive completion: no connection RCQ then.
  bool srq_has_rcq = config.srq && config.srq->rcq();
  if (config.rcq_size > 0 && !srq_has_rcq) {
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
  *out = std::move(queues);
  return Status::kOk;
}

}  // namespace rpma_sim
