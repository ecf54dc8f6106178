// connection.h -- an established (or establishing) connection: its CM id, its own event
// channel and the verbs queues it took over from its request.
//
// Deleting a connection destroys its id, which makes a connected peer see DISCONNECTED.
#ifndef RPMA_SIM_CM_CONNECTION_H_
#define RPMA_SIM_CM_CONNECTION_H_

#include <memory>
#include <vector>

#include "sim/cm/cm_id.h"
#include "sim/cm/event_channel.h"
#include "sim/verbs/connection_queues.h"

namespace rpma_sim {

class Connection {
 public:
  Connection(std::shared_ptr<CmId> id, std::shared_ptr<EventChannel> events,
             ConnectionQueues queues);
  ~Connection();

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  EventChannel& events() { return *events_; }
  ConnectionQueues& queues() { return queues_; }
  QueuePair& qp() { return *queues_.qp; }

  // rdma_disconnect: both sides get DISCONNECTED once; a no-op once closed.
  void Disconnect() { id_->Disconnect(); }

 private:
  std::shared_ptr<CmId> id_;
  std::shared_ptr<EventChannel> events_;
  ConnectionQueues queues_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CONNECTION_H_
