// shm_ring.cc -- copying into and out of a shared ring, and asking for and taking doorbells.
#include "sim/transport/shm_ring.h"

#include <string.h>

#include <algorithm>

#include "sim/common/guarded_copy.h"

namespace rpma_sim {
namespace {

// The doorbell handshake is Dekker's: each side stores its own word, then (after a full
// fence) reads the other's. Either the sleeper sees the new counter, or the other side
// sees the request; never neither.
bool Take(std::atomic<uint32_t>* wants) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return wants->load(std::memory_order_relaxed) != 0 && wants->exchange(0) != 0;
}

}  // namespace

int64_t ShmRing::Readable() const {
  uint64_t head = control_->head.load(std::memory_order_acquire);
  uint64_t tail = control_->tail.load(std::memory_order_acquire);
  uint64_t used = head - tail;
  return used > capacity_ ? -1 : static_cast<int64_t>(used);
}

ssize_t ShmRing::TryWrite(const iovec* parts, int count, Source source) {
  if (consumer_closed()) return -1;
  uint64_t head = control_->head.load(std::memory_order_relaxed);
  uint64_t tail = control_->tail.load(std::memory_order_acquire);
  if (head - tail > capacity_) return -1;
  size_t space = capacity_ - static_cast<size_t>(head - tail);
  size_t taken = 0;
  for (int i = 0; i < count && space > 0; ++i) {
    const auto* from = static_cast<const uint8_t*>(parts[i].iov_base);
    size_t left = std::min(parts[i].iov_len, space);
    space -= left;
    while (left > 0) {
      size_t at = static_cast<size_t>((head + taken) % capacity_);
      size_t piece = std::min(left, capacity_ - at);
      if (source == Source::kOwn) {
        memcpy(data_ + at, from, piece);
      } else if (CopyResult copied = GuardedCopy(data_ + at, from, piece);
                 copied != CopyResult::kCopied) {
        if (copied == CopyResult::kTargetUnreachable) return -1;
        // Nothing of this piece is taken; what came before it is.
        if (taken > 0) control_->head.store(head + taken, std::memory_order_release);
        return taken > 0 ? static_cast<ssize_t>(taken) : kUnreadable;
      }
      from += piece;
      left -= piece;
      taken += piece;
    }
  }
  if (taken > 0) control_->head.store(head + taken, std::memory_order_release);
  return static_cast<ssize_t>(taken);
}

ssize_t ShmRing::TryRead(uint8_t* data, size_t size) {
  uint64_t head = control_->head.load(std::memory_order_acquire);
  uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  if (head - tail > capacity_) return -1;
  size_t taken = std::min(size, static_cast<size_t>(head - tail));
  if (taken == 0) return 0;
  CopyOut(tail, data, taken);
  control_->tail.store(tail + taken, std::memory_order_release);
  return static_cast<ssize_t>(taken);
}

bool ShmRing::Peek(uint8_t* data, size_t size) const {
  int64_t readable = Readable();
  if (readable < 0 || static_cast<size_t>(readable) < size) return false;
  CopyOut(control_->tail.load(std::memory_order_relaxed), data, size);
  return true;
}

void ShmRing::CopyOut(uint64_t from, uint8_t* data, size_t size) const {
  for (size_t done = 0; done < size;) {
    size_t at = static_cast<size_t>((from + done) % capacity_);
    size_t piece = std::min(size - done, capacity_ - at);
    memcpy(data + done, data_ + at, piece);
    done += piece;
  }
}

bool ShmRing::ArmConsumerDoorbell() {
  control_->consumer_wants_doorbell.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (Readable() == 0 && !producer_closed()) return true;
  control_->consumer_wants_doorbell.store(0, std::memory_order_relaxed);
  return false;
}

bool ShmRing::ArmProducerDoorbell() {
  control_->producer_wants_doorbell.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  int64_t used = Readable();
  if (used >= 0 && static_cast<size_t>(used) == capacity_ && !consumer_closed()) return true;
  control_->producer_wants_doorbell.store(0, std::memory_order_relaxed);
  return false;
}

bool ShmRing::TakeConsumerDoorbell() { return Take(&control_->consumer_wants_doorbell); }

bool ShmRing::TakeProducerDoorbell() { return Take(&control_->producer_wants_doorbell); }

}  // namespace rpma_sim
