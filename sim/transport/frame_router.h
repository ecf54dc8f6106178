// frame_router.h -- a wire's handler that sends each frame to whom it concerns: the data
// path's frames (REQUEST, RESPONSE, PLACED) to one handler, the connection manager's (HELLO,
// ACCEPT, REJECT, DISCONNECT, and the TCP wire's DOORBELL) to another, so that neither passes
// through the other.
//
// The end of the wire goes to the connection manager's handler only: the data path learns
// of it as the connection manager ends the connection.
#ifndef RPMA_SIM_TRANSPORT_FRAME_ROUTER_H_
#define RPMA_SIM_TRANSPORT_FRAME_ROUTER_H_

#include <memory>
#include <string>

#include "sim/transport/frame_wire.h"

namespace rpma_sim {

class FrameRouter : public WireHandler {
 public:
  FrameRouter(std::shared_ptr<WireHandler> control, std::shared_ptr<WireHandler> data)
      : control_(std::move(control)), data_(std::move(data)) {}

  void OnFrame(Frame frame) override {
    bool data = frame.type == FrameType::kRequest || frame.type == FrameType::kResponse ||
                frame.type == FrameType::kPlaced;
    (data ? data_ : control_)->OnFrame(std::move(frame));
  }

  void OnWireClosed(const std::string& reason) override { control_->OnWireClosed(reason); }

 private:
  std::shared_ptr<WireHandler> control_;
  std::shared_ptr<WireHandler> data_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_FRAME_ROUTER_H_
