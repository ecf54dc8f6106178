// connection_request.h -- rpma_conn_req's model: a connection before it exists.
//
// Outgoing (client): the destination is resolved and the verbs queues are created at once,
// as rpma_conn_req_new does; nobody listening shows up only later, as REJECTED. Incoming
// (server): made from a CONNECT_REQUEST event, with a copy of the client's private data.
// Connect() consumes the request either way; deleting an incoming request rejects it.
#ifndef RPMA_SIM_CM_CONNECTION_REQUEST_H_
#define RPMA_SIM_CM_CONNECTION_REQUEST_H_

#include <memory>
#include <vector>

#include "sim/cm/cm_id.h"
#include "sim/cm/connection.h"
#include "sim/common/status.h"
#include "sim/fabric/address.h"
#include "sim/verbs/connection_queues.h"

namespace rpma_sim {

class ConnectionRequest {
 public:
  // Client side. kProvider if addr:port does not resolve.
  static Status NewOutgoing(const std::shared_ptr<ProtectionDomain>& pd, const char* addr,
                            const char* port, const ConnectionConfig& config,
                            std::unique_ptr<ConnectionRequest>* request);

  // Server side, from a CONNECT_REQUEST event taken from a listener. On failure the client's
  // request is rejected.
  static Status NewIncoming(const std::shared_ptr<ProtectionDomain>& pd, CmEvent event,
                            const ConnectionConfig& config,
                            std::unique_ptr<ConnectionRequest>* request);

  ~ConnectionRequest();

  ConnectionRequest(const ConnectionRequest&) = delete;
  ConnectionRequest& operator=(const ConnectionRequest&) = delete;

  bool incoming() const { return incoming_; }
  // The client's private data (incoming requests only).
  const std::vector<uint8_t>& private_data() const { return private_data_; }
  ConnectionQueues& queues() { return queues_; }

  // Accepts (incoming) or connects (outgoing) with `private_data`, creating the connection.
  // On failure the request is released (an incoming one rejected) and *connection untouched.
  static Status Connect(std::unique_ptr<ConnectionRequest> request,
                        const std::vector<uint8_t>& private_data,
                        std::unique_ptr<Connection>* connection);

 private:
  enum class Direction { kOutgoing, kIncoming };
  ConnectionRequest(Direction direction, ConnectionQueues queues, std::shared_ptr<CmId> id);

  const bool incoming_;
  ConnectionQueues queues_;
  std::shared_ptr<CmId> id_;
  SocketAddress destination_;          // outgoing only
  std::vector<uint8_t> private_data_;  // incoming only
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_CONNECTION_REQUEST_H_
