// shm_switch.h -- the move of a connection's data path from its TCP wire to a
// shared-memory segment, and the segment's life around it.
//
// The client offers a segment in its HELLO (Offer); a server that can open it takes it
// (TakeOffer, Take). At ACCEPT both sides move (MoveTo): from then on every frame, both
// ways, goes through the segment's rings, and the TCP connection stays open to learn when
// the peer is gone and to carry the DOORBELL frames that wake a side sleeping on the rings.
// Thread-safe on its own.
#ifndef RPMA_SIM_CM_SHM_SWITCH_H_
#define RPMA_SIM_CM_SHM_SWITCH_H_

#include <memory>
#include <string>

#include "sim/cm/connect_messages.h"
#include "sim/common/mutex.h"
#include "sim/transport/frame_wire.h"
#include "sim/transport/shm_segment.h"
#include "sim/transport/shm_stream.h"
#include "sim/verbs/wire_link.h"

namespace rpma_sim {

class ShmSwitch {
 public:
  ShmSwitch() = default;
  ShmSwitch(const ShmSwitch&) = delete;
  ShmSwitch& operator=(const ShmSwitch&) = delete;

  // Server: opens the segment `hello` offers if this host can and this side's transport
  // setting takes it; null otherwise. Not under the CM lock (it maps the segment).
  static std::shared_ptr<ShmSegment> TakeOffer(const HelloMessage& hello);

  // The segment offered (client) or taken (server), until the move.
  void Hold(std::shared_ptr<ShmSegment> segment);
  std::shared_ptr<ShmSegment> held();
  // Client: the server answered; the segment is kept only if it moves there.
  std::shared_ptr<ShmSegment> Answered(bool moves);

  // Moves the data path to `segment`: a wire over its rings, which `link` sends through
  // from now on; DOORBELL frames and the end go over `tcp`. Returns the new wire, for the
  // caller to start reading.
  std::shared_ptr<FrameWire> MoveTo(std::shared_ptr<ShmSegment> segment,
                                    const std::shared_ptr<FrameWire>& tcp,
                                    const std::shared_ptr<WireLink>& link);

  // The wire over the segment once the data path moved there; null before (or never).
  std::shared_ptr<FrameWire> wire();

  // A DOORBELL arrived on TCP: the rings are looked at again. False if there are no rings
  // (a peer that lies).
  bool Ring();

  // The TCP connection ended. True if the rings carry on until the peer's last frame is
  // read (then the shared-memory wire ends the connection); false if the connection ends
  // now (an offered segment nobody answered is unlinked).
  bool TcpClosed();

 private:
  Mutex mutex_;
  std::shared_ptr<ShmSegment> segment_ GUARDED_BY(mutex_);
  std::shared_ptr<FrameWire> wire_ GUARDED_BY(mutex_);
  ShmStream* stream_ GUARDED_BY(mutex_) = nullptr;  // owned by wire_
  bool tcp_closed_ GUARDED_BY(mutex_) = false;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_SHM_SWITCH_H_
