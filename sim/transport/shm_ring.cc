// shm_ring.cc -- copying into and out of a shared ring, and futex waits and wakes.
#include "sim/transport/shm_ring.h"

#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace rpma_sim {
namespace {

// A waiter first spins on the ring for kBusySpin, then yields the core between looks until
// kSpin, then sleeps on the futex: a reply that comes within the spin costs no wakeup.
constexpr auto kBusySpin = std::chrono::microseconds(20);
constexpr auto kSpin = std::chrono::microseconds(200);
// A sleeper wakes this often to ask whether it should give up.
constexpr long kSleepNs = 20 * 1000 * 1000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// The segment is shared between processes, so these are not FUTEX_PRIVATE.
void FutexWait(std::atomic<uint32_t>* word, uint32_t expected) {
  timespec timeout{0, kSleepNs};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &timeout, nullptr,
          0);
}

void FutexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr,
          0);
}

void Signal(std::atomic<uint32_t>* waiting, std::atomic<uint32_t>* signal) {
  // Pairs with the fence in Await: either the waiter sees the new counter, or this sees
  // that it waits.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (waiting->load() == 0) return;
  signal->fetch_add(1);
  FutexWakeAll(signal);
}

// Sleeps on `signal` until `ready`; the eventcount pattern: the signal is read before the
// condition is checked, so a wake between the two is not lost.
void Await(std::atomic<uint32_t>* waiting, std::atomic<uint32_t>* signal,
           const std::function<bool()>& ready) {
  auto start = std::chrono::steady_clock::now();
  while (!ready()) {
    auto spun = std::chrono::steady_clock::now() - start;
    if (spun < kBusySpin) {
      CpuRelax();
      continue;
    }
    if (spun < kSpin) {
      sched_yield();
      continue;
    }
    uint32_t seen = signal->load();
    waiting->store(1);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!ready()) FutexWait(signal, seen);
    waiting->store(0);
  }
}

}  // namespace

int64_t ShmRing::Readable() const {
  uint64_t head = control_->head.load(std::memory_order_acquire);
  uint64_t tail = control_->tail.load(std::memory_order_acquire);
  uint64_t used = head - tail;
  return used > capacity_ ? -1 : static_cast<int64_t>(used);
}

ssize_t ShmRing::TryWrite(const iovec* parts, int count) {
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
      memcpy(data_ + at, from, piece);
      from += piece;
      left -= piece;
      taken += piece;
    }
  }
  if (taken == 0) return 0;
  control_->head.store(head + taken, std::memory_order_seq_cst);
  Signal(&control_->consumer_waiting, &control_->data_signal);
  return static_cast<ssize_t>(taken);
}

ssize_t ShmRing::TryRead(uint8_t* data, size_t size) {
  uint64_t head = control_->head.load(std::memory_order_acquire);
  uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  if (head - tail > capacity_) return -1;
  size_t taken = std::min(size, static_cast<size_t>(head - tail));
  if (taken == 0) return 0;
  CopyOut(tail, data, taken);
  control_->tail.store(tail + taken, std::memory_order_seq_cst);
  Signal(&control_->producer_waiting, &control_->space_signal);
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

void ShmRing::WaitForData(const std::function<bool()>& stop) {
  Await(&control_->consumer_waiting, &control_->data_signal,
        [&] { return Readable() != 0 || producer_closed() || stop(); });
}

void ShmRing::WaitForSpace(const std::function<bool()>& stop) {
  Await(&control_->producer_waiting, &control_->space_signal, [&] {
    int64_t used = Readable();
    return used < 0 || static_cast<size_t>(used) < capacity_ || consumer_closed() || stop();
  });
}

void ShmRing::WakeConsumer() {
  control_->data_signal.fetch_add(1);
  FutexWakeAll(&control_->data_signal);
}

void ShmRing::WakeProducer() {
  control_->space_signal.fetch_add(1);
  FutexWakeAll(&control_->space_signal);
}

void ShmRing::CloseAsProducer() {
  control_->producer_closed.store(1);
  WakeConsumer();
}

void ShmRing::CloseAsConsumer() {
  control_->consumer_closed.store(1);
  WakeProducer();
}

}  // namespace rpma_sim
