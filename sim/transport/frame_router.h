// frame_router.h -- a wire's handler that sends each frame to whom it concerns: the data
// path's frames (REQUEST, RESPONSE, PLACED) to one handler, the connection manager's (HELLO,
// ACCEPT, REJECT, DISCONNECT, and the TCP wire's DOORBELL) to another, so that neither passes
// through the other.
//
// The end of the wire goes to the connection manager's handler only: the data path learns
// of it as the connection manager ends the connection. Once the data path moved to another
// wire (DataMoved: a TCP wire after the move to shared memory), data frames on this one go
// to the connection manager too, which takes them for the malformed input they are.
#ifndef RPMA_SIM_TRANSPORT_FRAME_ROUTER_H_
#define RPMA_SIM_TRANSPORT_FRAME_ROUTER_H_

#include <atomic>
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
    bool here = !data_moved_.load(std::memory_order_acquire);
    (data && here ? data_ : control_)->OnFrame(std::move(frame));
  }
  void DataMoved() { data_moved_.store(true, std::memory_order_release); }

  void OnWireClosed(const std::string& reason) override { control_->OnWireClosed(reason); }

 private:
  std::shared_ptr<WireHandler> control_;
  std::shared_ptr<WireHandler> data_;
  std::atomic<bool> data_moved_{false};
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_FRAME_ROUTER_H_
