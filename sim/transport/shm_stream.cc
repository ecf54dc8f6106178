// shm_stream.cc -- reading and writing a connection's rings, waiting for them on the
// progress engine (a short spin, then a doorbell), and ending them.
#include "sim/transport/shm_stream.h"
#include "sim/common/mutex.h"

#include <errno.h>
#include <sched.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>

#include "sim/common/log.h"
#include "sim/fabric/io_service.h"

namespace rpma_sim {
namespace {

// After the last byte read or written, a wait looks at the rings on every turn of the
// engine for kBusySpin, then yields the core between looks until kSpin, then asks for a
// doorbell: a reply within the spin costs no system call on either side.
constexpr int64_t kBusySpinNs = 20 * 1000;
constexpr int64_t kSpinNs = 200 * 1000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct ShmStream::State : std::enable_shared_from_this<State> {
  std::shared_ptr<ShmSegment> segment;
  std::function<void()> ring_doorbell;
  std::function<void()> on_shutdown;
  std::atomic<bool> stopped{false};
  std::atomic<bool> peer_gone{false};
  std::atomic<bool> shutdown_done{false};
  std::atomic<int64_t> last_activity_ns{0};

  Mutex mutex;
  std::function<void()> readable_waiter GUARDED_BY(mutex);
  std::function<void()> writable_waiter GUARDED_BY(mutex);
  bool poll_posted GUARDED_BY(mutex) = false;

  ShmRing& inbound() { return segment->inbound(); }
  ShmRing& outbound() { return segment->outbound(); }
  void Touch() { last_activity_ns.store(NowNs(), std::memory_order_relaxed); }

  // Something to read: bytes, the end, or a corrupt ring for the reader to report.
  bool ReadReady() {
    return inbound().Readable() != 0 || inbound().producer_closed() || stopped || peer_gone ||
           segment->truncated();
  }
  // Room to write, or a reason the writer will fail.
  bool WriteReady() {
    int64_t used = outbound().Readable();
    return used < 0 || static_cast<size_t>(used) < outbound().capacity() ||
           outbound().consumer_closed() || stopped || peer_gone || segment->truncated();
  }

  // Has Poll run on the engine soon, once however often it is asked.
  void Kick() {
    {
      MutexLock lock(&mutex);
      if (poll_posted) return;
      poll_posted = true;
    }
    PostPoll();
  }

  void PostPoll() {
    auto self = shared_from_this();
    boost::asio::post(IoContext(), [self] { self->Poll(); });
  }

  // A wait just begun (`waiter` set to `ready`): asleep at once if Poll would only ask for
  // a doorbell (nothing ready, no activity within the spin), else Poll runs. The engine is
  // not woken for a wait begun elsewhere that has nothing to do (a server's new connection,
  // whose client writes nothing before it has the server's accept).
  void BeginWait(std::function<void()>* waiter, std::function<void()> ready) {
    {
      MutexLock lock(&mutex);
      *waiter = std::move(ready);
      if (poll_posted || SleepLocked()) return;
      poll_posted = true;
    }
    PostPoll();
  }

  // Whether every wait may sleep until a doorbell now: none is ready, the last activity is
  // older than the spin, and each ring took the request (it did not change meanwhile).
  bool SleepLocked() REQUIRES(mutex) {
    if ((readable_waiter && ReadReady()) || (writable_waiter && WriteReady())) return false;
    if (NowNs() - last_activity_ns.load(std::memory_order_relaxed) < kSpinNs) return false;
    bool armed = (!readable_waiter || inbound().ArmConsumerDoorbell()) &&
                 (!writable_waiter || outbound().ArmProducerDoorbell());
    // The arm may be the first access to find the segment truncated (it then read zeros):
    // a wait that would never be rung.
    return armed && !segment->truncated();
  }

  // On the engine: wakes the waits whose rings are ready; the others spin a while longer or
  // ask for a doorbell.
  void Poll() {
    std::function<void()> on_readable, on_writable;
    bool again = false, yield = false;
    {
      MutexLock lock(&mutex);
      poll_posted = false;
      if (readable_waiter && ReadReady()) on_readable.swap(readable_waiter);
      if (writable_waiter && WriteReady()) on_writable.swap(writable_waiter);
      if (readable_waiter || writable_waiter) {
        int64_t idle = NowNs() - last_activity_ns.load(std::memory_order_relaxed);
        if (idle < kSpinNs) {
          again = true;
          yield = idle > kBusySpinNs;
        } else {
          // The decision a wait just begun makes too: a ring that changed since the look
          // above, or a truncation the arm found, is looked at again, not slept on.
          again = !SleepLocked();
        }
        poll_posted = again;
      }
    }
    if (on_readable) on_readable();
    if (on_writable) on_writable();
    if (!again) return;
    if (yield) sched_yield();
    PostPoll();
  }
};

ShmStream::ShmStream(std::shared_ptr<ShmSegment> segment, std::string peer,
                     std::function<void()> ring_doorbell, std::function<void()> on_shutdown)
    : state_(std::make_shared<State>()), peer_(std::move(peer) + " (shm)") {
  state_->segment = std::move(segment);
  state_->ring_doorbell = std::move(ring_doorbell);
  state_->on_shutdown = std::move(on_shutdown);
  // No activity yet: a connection that was just made and carries nothing spins for nothing.
}

void ShmStream::AfterRead() {
  state_->Touch();
  if (state_->inbound().TakeProducerDoorbell()) state_->ring_doorbell();
}

bool ShmStream::Broken(ssize_t accessed) {
  if (state_->segment->truncated()) {
    SIM_LOG_ERROR("%s truncated the shared memory segment", peer_.c_str());
    return true;
  }
  if (accessed >= 0) return false;
  SIM_LOG_ERROR("the shared memory ring from %s is corrupt", peer_.c_str());
  return true;
}

ssize_t ShmStream::TryRead(uint8_t* data, size_t size) {
  ShmRing& ring = state_->inbound();
  for (;;) {
    ssize_t n = ring.TryRead(data, size);
    if (Broken(n)) return -1;
    if (n > 0) {
      AfterRead();
      return n;
    }
    if (state_->stopped) return -1;
    if (!ring.producer_closed() && !state_->peer_gone) return 0;
    // Nothing more will be written; what was written before the flag is readable now.
    if (ring.Readable() == 0) return -1;
  }
}

ssize_t ShmStream::Write(const iovec* parts, int count) {
  return WriteFrom(parts, count, ShmRing::Source::kOwn);
}

ssize_t ShmStream::WriteFromApplication(const iovec* parts, int count) {
  return WriteFrom(parts, count, ShmRing::Source::kApplication);
}

ssize_t ShmStream::WriteFrom(const iovec* parts, int count, ShmRing::Source source) {
  if (state_->stopped || state_->peer_gone) return -1;
  ssize_t n = state_->outbound().TryWrite(parts, count, source);
  if (Broken(0)) return -1;  // what it wrote went nowhere
  if (n == ShmRing::kUnreadable) {
    errno = EFAULT;
    return -1;
  }
  if (n < 0 && !state_->outbound().consumer_closed())
    SIM_LOG_ERROR("the shared memory ring to %s is corrupt", peer_.c_str());
  if (n > 0) {
    state_->Touch();
    if (state_->outbound().TakeConsumerDoorbell()) state_->ring_doorbell();
  }
  return n;
}

void ShmStream::AsyncWaitReadable(std::function<void()> ready) {
  state_->BeginWait(&state_->readable_waiter, std::move(ready));
}

void ShmStream::AsyncWaitWritable(std::function<void()> ready) {
  state_->BeginWait(&state_->writable_waiter, std::move(ready));
}

void ShmStream::OnDoorbell() { state_->Kick(); }

void ShmStream::Shutdown() {
  state_->stopped = true;
  state_->outbound().CloseAsProducer();
  state_->inbound().CloseAsConsumer();
  state_->Kick();  // this side's waits see the end
  if (!state_->shutdown_done.exchange(true) && state_->on_shutdown) state_->on_shutdown();
}

void ShmStream::PeerGone() {
  state_->peer_gone = true;
  state_->Kick();
}

}  // namespace rpma_sim
