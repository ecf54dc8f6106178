// shm_stream.cc -- reading and writing a connection's rings, and ending them.
#include "sim/transport/shm_stream.h"

#include "sim/common/log.h"

namespace rpma_sim {

ShmStream::ShmStream(std::shared_ptr<ShmSegment> segment, std::string peer,
                     std::function<void()> on_shutdown)
    : segment_(std::move(segment)),
      peer_(std::move(peer) + " (shm)"),
      on_shutdown_(std::move(on_shutdown)) {}

bool ShmStream::ReadExactly(uint8_t* data, size_t size) {
  ShmRing& ring = segment_->inbound();
  auto stop = [this] { return stopped_.load() || peer_gone_.load(); };
  while (size > 0) {
    ssize_t n = ring.TryRead(data, size);
    if (n < 0) {
      SIM_LOG_ERROR("the shared memory ring from %s is corrupt", peer_.c_str());
      return false;
    }
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (stopped_) return false;
    if (ring.producer_closed() || peer_gone_) {
      // Nothing more will be written; what was written before the flag is readable now.
      if (ring.Readable() != 0) continue;
      return false;
    }
    ring.WaitForData(stop);
  }
  return true;
}

size_t ShmStream::Available() {
  int64_t readable = segment_->inbound().Readable();
  // A corrupt ring claims everything: the reader then reads, and reports it.
  return readable < 0 ? SIZE_MAX : static_cast<size_t>(readable);
}

bool ShmStream::Peek(uint8_t* data, size_t size) { return segment_->inbound().Peek(data, size); }

bool ShmStream::TryReadExactly(uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = segment_->inbound().TryRead(data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ShmStream::WaitReadable() {
  ShmRing& ring = segment_->inbound();
  auto stop = [this] { return stopped_.load() || peer_gone_.load(); };
  for (;;) {
    if (ring.Readable() != 0) return true;  // data, or a corrupt ring for the reader to report
    if (stop() || ring.producer_closed()) return ring.Readable() != 0;
    ring.WaitForData(stop);
  }
}

bool ShmStream::Ended() {
  return stopped_ || peer_gone_ || segment_->inbound().producer_closed();
}

ssize_t ShmStream::Write(const iovec* parts, int count, bool dont_wait) {
  ShmRing& ring = segment_->outbound();
  auto stop = [this] { return stopped_.load() || peer_gone_.load(); };
  for (;;) {
    if (stop()) return -1;
    ssize_t n = ring.TryWrite(parts, count);
    if (n != 0 || dont_wait) return n;
    ring.WaitForSpace(stop);
  }
}

void ShmStream::Shutdown() {
  stopped_ = true;
  segment_->outbound().CloseAsProducer();
  segment_->inbound().CloseAsConsumer();
  segment_->inbound().WakeConsumer();    // our own reader, if it sleeps
  segment_->outbound().WakeProducer();   // and our own writer
  if (!shutdown_done_.exchange(true) && on_shutdown_) on_shutdown_();
}

void ShmStream::PeerGone() {
  peer_gone_ = true;
  segment_->inbound().WakeConsumer();
  segment_->outbound().WakeProducer();
}

}  // namespace rpma_sim
