// raw_shm_peer.cc -- frames through a connection's rings, written and read by hand.
#include "tests/integration/raw_shm_peer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>

#include "tests/integration/integration_support.h"

namespace raw_peer {

using integration::kSafetyTimeoutMs;

ShmPeer::~ShmPeer() {
  Close();
  if (fd_ >= 0) close(fd_);
}

void ShmPeer::Connect(const std::string& port) {
  ring_capacity_ = rpma_sim::ShmSegment::RingCapacityFor(10);
  ASSERT_EQ(rpma_sim::Status::kOk, rpma_sim::ShmSegment::Create(ring_capacity_, &segment_));
  fd_ = shm_open(("/" + segment_->name()).c_str(), O_RDWR, 0);
  ASSERT_GE(fd_, 0);
  ASSERT_NO_FATAL_FAILURE(tcp_.Connect(port));
}

void ShmPeer::Truncate() { ASSERT_EQ(0, ftruncate(fd_, 0)); }

std::vector<uint8_t> ShmPeer::Offer() const {
  std::vector<uint8_t> offer = {1, 1};
  PutLe(&offer, segment_->nonce(), 8);
  offer.push_back(static_cast<uint8_t>(segment_->name().size()));
  offer.insert(offer.end(), segment_->name().begin(), segment_->name().end());
  return offer;
}

void ShmPeer::Send(const std::vector<uint8_t>& bytes) {
  if (!on_rings_) return tcp_.Send(bytes);
  rpma_sim::ShmRing& ring = segment_->outbound();
  long long deadline = integration::NowMs() + kSafetyTimeoutMs;
  size_t sent = 0;
  while (sent < bytes.size()) {
    iovec part{const_cast<uint8_t*>(bytes.data()) + sent, bytes.size() - sent};
    ssize_t n = ring.TryWrite(&part, 1);
    if (n < 0) return;  // the simulator closed its end: the sending ends, no failure
    if (n > 0) {
      sent += static_cast<size_t>(n);
      // Whether or not the server asked for it: a doorbell too many costs it a look.
      ASSERT_NO_FATAL_FAILURE(Ring());
      deadline = integration::NowMs() + kSafetyTimeoutMs;
      continue;
    }
    ASSERT_LT(integration::NowMs(), deadline) << "the server read nothing of a full ring";
    sched_yield();
  }
}

void ShmPeer::Ring() { tcp_.Send(Frame(kDoorbell, {})); }

void ShmPeer::ReadFrame(uint16_t* type, std::vector<uint8_t>* body) {
  if (!on_rings_) return tcp_.ReadFrame(type, body);
  rpma_sim::ShmRing& ring = segment_->inbound();
  long long deadline = integration::NowMs() + kSafetyTimeoutMs;
  uint8_t header[kHeaderSize];
  for (;;) {
    ASSERT_LT(integration::NowMs(), deadline) << "no whole frame in the ring";
    ASSERT_GE(ring.Readable(), 0) << "the server's ring is corrupt";
    if (ring.Peek(header, sizeof(header))) {
      uint32_t length = 0;
      for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(header[8 + i]) << (8 * i);
      if (static_cast<size_t>(ring.Readable()) >= kHeaderSize + length) {
        std::vector<uint8_t> frame(kHeaderSize + length);
        ASSERT_EQ(static_cast<ssize_t>(frame.size()), ring.TryRead(frame.data(), frame.size()));
        *type = static_cast<uint16_t>(frame[6] | frame[7] << 8);
        body->assign(frame.begin() + kHeaderSize, frame.end());
        return;
      }
    }
    ASSERT_FALSE(ring.producer_closed() && ring.Readable() == 0)
        << "the simulator closed the rings instead of answering";
    sched_yield();
  }
}

void ShmPeer::ExpectClosed() { tcp_.ExpectClosed(); }

void ShmPeer::Close() {
  if (segment_ && on_rings_) segment_->outbound().CloseAsProducer();
  tcp_.Close();
}

}  // namespace raw_peer
