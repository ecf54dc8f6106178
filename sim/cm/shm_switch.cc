// shm_switch.cc -- offering, taking and moving to a shared-memory segment.
#include "sim/cm/shm_switch.h"

#include "sim/cm/connect_route.h"
#include "sim/common/log.h"
#include "sim/fabric/config.h"

namespace rpma_sim {
namespace {

constexpr size_t kDoorbellsQueued = 2;  // see MoveTo

}  // namespace

std::shared_ptr<ShmSegment> ShmSwitch::TakeOffer(const HelloMessage& hello) {
  if (!hello.has_offer) return nullptr;
  if (!TakesSegmentOffer(GetTransport(), hello.offer.required)) return nullptr;
  std::shared_ptr<ShmSegment> segment;
  if (ShmSegment::Open(hello.offer.name, hello.offer.nonce, &segment) != Status::kOk)
    return nullptr;
  segment->ProbePeer();
  return segment;
}

void ShmSwitch::Hold(std::shared_ptr<ShmSegment> segment) {
  MutexLock lock(&mutex_);
  segment_ = std::move(segment);
}

std::shared_ptr<ShmSegment> ShmSwitch::held() {
  MutexLock lock(&mutex_);
  return segment_;
}

std::shared_ptr<ShmSegment> ShmSwitch::Answered(bool moves) {
  std::shared_ptr<ShmSegment> segment;
  {
    MutexLock lock(&mutex_);
    segment = segment_;
    if (!moves) segment_.reset();
  }
  if (segment) segment->Unlink();  // answered: the server mapped it or will not
  return segment;
}

std::shared_ptr<FrameWire> ShmSwitch::MoveTo(std::shared_ptr<ShmSegment> segment,
                                             const std::shared_ptr<FrameWire>& tcp,
                                             const std::shared_ptr<WireLink>& link) {
  std::weak_ptr<FrameWire> weak_tcp = tcp;
  auto ring_doorbell = [weak_tcp] {
    std::shared_ptr<FrameWire> wire = weak_tcp.lock();
    // After the move the TCP wire carries DOORBELLs only, and each says "look at the
    // rings", however many were asked for. With two queued, the second is not handed to
    // the kernel yet: the peer reads it after this side's write to the ring, and sees that
    // write. So a peer that asks after every write and never reads its socket has at most
    // two queued for it, and no wake-up is lost.
    if (wire && wire->queued_frames() < kDoorbellsQueued) wire->Send(FrameType::kDoorbell, {});
  };
  auto close_tcp = [weak_tcp] {
    if (auto wire = weak_tcp.lock()) wire->Close();
  };
  auto stream = std::make_unique<ShmStream>(segment, tcp->peer(), ring_doorbell, close_tcp);
  ShmStream* raw_stream = stream.get();
  auto shm_wire = std::make_shared<FrameWire>(std::move(stream));
  bool tcp_closed;
  {
    // Before the data path can use the rings: the first doorbell must find the stream.
    MutexLock lock(&mutex_);
    wire_ = shm_wire;
    stream_ = raw_stream;
    tcp_closed = tcp_closed_;
  }
  link->UseSharedMemory(shm_wire, segment);
  if (tcp_closed) raw_stream->PeerGone();
  const bool process_vm = segment->PeerReachesUs() || segment->WeReachPeer();
  const PermitOutcome permit = segment->permit();
  SIM_LOG_INFO("connection with %s moved to shared memory (payloads %s%s%s)", tcp->peer().c_str(),
               process_vm ? "by process_vm where large" : "through the segment",
               permit != PermitOutcome::kNotNeeded ? "; Yama: peer " : "",
               permit != PermitOutcome::kNotNeeded ? PermitOutcomeText(permit) : "");
  return shm_wire;
}

std::shared_ptr<FrameWire> ShmSwitch::wire() {
  MutexLock lock(&mutex_);
  return wire_;
}

bool ShmSwitch::Ring() {
  ShmStream* stream;
  {
    MutexLock lock(&mutex_);
    stream = stream_;
  }
  if (!stream) return false;
  stream->OnDoorbell();
  return true;
}

bool ShmSwitch::TcpClosed() {
  ShmStream* stream;
  std::shared_ptr<ShmSegment> offered;
  {
    MutexLock lock(&mutex_);
    tcp_closed_ = true;
    stream = stream_;
    if (!stream) offered = segment_;
  }
  if (offered) offered->Unlink();
  // Over shared memory the watch has fired: the reader takes what the peer left in the
  // ring, then ends the connection.
  if (stream) stream->PeerGone();
  return stream != nullptr;
}

}  // namespace rpma_sim
