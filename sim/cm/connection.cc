// connection.cc -- teardown of a connection.
#include "sim/cm/connection.h"

namespace rpma_sim {

Connection::Connection(std::shared_ptr<CmId> id, std::shared_ptr<EventChannel> events,
                       ConnectionQueues queues)
    : id_(std::move(id)), events_(std::move(events)), queues_(std::move(queues)) {}

Connection::~Connection() {
  id_->Destroy();
  queues_.qp->Destroy();
}

}  // namespace rpma_sim
