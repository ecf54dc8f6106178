// Tests of ShmRing (sim/transport/shm_ring): copying in and out, wrap-around, a full and an
// empty ring, a corrupt control block, a closed consumer, and futex waits and wakes. The ring
// works within one process too, so a heap RingControl and buffer stand in for a segment.
#include "sim/transport/shm_ring.h"

#include <sys/syscall.h>
#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

using rpma_sim_test::CurrentTid;
using rpma_sim_test::WaitUntilBlockedIn;

constexpr size_t kCapacity = 16;
constexpr size_t kGuardSize = 64;
constexpr uint8_t kGuardByte = 0xA5;

// How long a waiting thread waits at most before it gives up: a safety net so that a broken
// wake-up fails the test instead of hanging it, never a wait for an event.
constexpr auto kSafetyNet = std::chrono::seconds(30);

iovec Part(const void* data, size_t size) { return iovec{const_cast<void*>(data), size}; }

// A ring over a heap control block and a data area with guard bytes on both sides.
class ShmRingTest : public ::testing::Test {
 protected:
  ShmRingTest() : buffer_(kGuardSize + kCapacity + kGuardSize, kGuardByte) {
    ring_ = ShmRing(&control_, data(), kCapacity);
  }

  uint8_t* data() { return buffer_.data() + kGuardSize; }

  // True if no byte outside the data area changed.
  bool GuardsIntact() const {
    for (size_t i = 0; i < kGuardSize; ++i) {
      if (buffer_[i] != kGuardByte) return false;
      if (buffer_[kGuardSize + kCapacity + i] != kGuardByte) return false;
    }
    return true;
  }

  ssize_t Write(const std::string& text) {
    iovec part = Part(text.data(), text.size());
    return ring_.TryWrite(&part, 1);
  }

  // Reads up to `size` bytes; "<error>" if TryRead failed.
  std::string Read(size_t size) {
    std::string out(size, '\0');
    ssize_t n = ring_.TryRead(reinterpret_cast<uint8_t*>(&out[0]), size);
    if (n < 0) return "<error>";
    out.resize(static_cast<size_t>(n));
    return out;
  }

  RingControl control_;
  std::vector<uint8_t> buffer_;
  ShmRing ring_;
};

TEST_F(ShmRingTest, WriteThenReadRoundTrips) {
  EXPECT_EQ(Write("hello"), 5);
  EXPECT_EQ(ring_.Readable(), 5);
  EXPECT_EQ(Read(100), "hello");
  EXPECT_EQ(ring_.Readable(), 0);
  EXPECT_EQ(control_.head.load(), 5u);
  EXPECT_EQ(control_.tail.load(), 5u);
  EXPECT_TRUE(GuardsIntact());
}

TEST_F(ShmRingTest, ReadTakesAtMostTheRequestedSize) {
  EXPECT_EQ(Write("abcdef"), 6);
  EXPECT_EQ(Read(4), "abcd");
  EXPECT_EQ(Read(4), "ef");
}

TEST_F(ShmRingTest, TwoPartWriteWrapsAcrossTheEndOfTheDataArea) {
  ASSERT_EQ(Write("0123456789"), 10);
  ASSERT_EQ(Read(10), "0123456789");
  // Positions 10..15 then 0..5: the first part fits before the end, the second wraps.
  const std::string first = "ABCD";
  const std::string second = "EFGHIJKL";
  iovec parts[2] = {Part(first.data(), first.size()), Part(second.data(), second.size())};
  EXPECT_EQ(ring_.TryWrite(parts, 2), 12);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(data()) + 10, 6), "ABCDEF");
  EXPECT_EQ(std::string(reinterpret_cast<char*>(data()), 6), "GHIJKL");
  EXPECT_EQ(Read(12), "ABCDEFGHIJKL");
  EXPECT_TRUE(GuardsIntact());
}

TEST_F(ShmRingTest, TryWriteTakesOnlyWhatFitsThenNothing) {
  EXPECT_EQ(Write("0123456789"), 10);
  EXPECT_EQ(Write("abcdefghij"), 6);  // 16 - 10 left
  EXPECT_EQ(ring_.Readable(), 16);
  EXPECT_EQ(Write("x"), 0);
  EXPECT_EQ(Read(100), "0123456789abcdef");
  EXPECT_TRUE(GuardsIntact());
}

TEST_F(ShmRingTest, TryReadOfAnEmptyRingReturnsZero) {
  uint8_t byte = 0;
  EXPECT_EQ(ring_.TryRead(&byte, 1), 0);
  ASSERT_EQ(Write("a"), 1);
  ASSERT_EQ(Read(1), "a");
  EXPECT_EQ(ring_.TryRead(&byte, 1), 0);
}

TEST_F(ShmRingTest, HeadTooFarAheadOfTailIsCorrupt) {
  control_.tail.store(3);
  control_.head.store(3 + kCapacity + 1);
  EXPECT_EQ(ring_.Readable(), -1);
  EXPECT_EQ(Read(kCapacity), "<error>");
  EXPECT_EQ(Write("abc"), -1);
  EXPECT_TRUE(GuardsIntact());
}

TEST_F(ShmRingTest, TailAheadOfHeadIsCorrupt) {
  control_.head.store(5);
  control_.tail.store(6);
  EXPECT_EQ(ring_.Readable(), -1);
  EXPECT_EQ(Read(kCapacity), "<error>");
  EXPECT_EQ(Write("abc"), -1);
  EXPECT_TRUE(GuardsIntact());
}

TEST_F(ShmRingTest, ArbitraryButConsistentCountersStayInsideTheDataArea) {
  // A peer may set any counters; as long as they differ by at most the capacity the ring
  // works, and whatever they are it only touches its own data area.
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  for (uint64_t tail : {max - 2, max - 20, uint64_t{1} << 63, uint64_t{12345}}) {
    control_.tail.store(tail);
    control_.head.store(tail);
    std::string text(kCapacity, 'z');
    EXPECT_EQ(Write(text), static_cast<ssize_t>(kCapacity));
    EXPECT_EQ(Read(100), text);
    EXPECT_TRUE(GuardsIntact()) << "tail " << tail;
  }
}

TEST_F(ShmRingTest, ClosedConsumerMakesTryWriteFail) {
  ring_.CloseAsConsumer();
  EXPECT_TRUE(ring_.consumer_closed());
  EXPECT_EQ(Write("abc"), -1);
  EXPECT_EQ(ring_.Readable(), 0);
}

TEST_F(ShmRingTest, ClosedProducerIsSeenByTheConsumer) {
  ASSERT_EQ(Write("ab"), 2);
  ring_.CloseAsProducer();
  EXPECT_TRUE(ring_.producer_closed());
  EXPECT_EQ(Read(10), "ab");  // what was written before stays readable
}

// Runs `wait(stop)` on a thread and tells the caller once that thread sleeps in the futex.
// `timed_out` turns true if the safety net ended the wait.
class BlockedWaiter {
 public:
  explicit BlockedWaiter(std::function<void(const std::function<bool()>&)> wait) {
    std::promise<pid_t> tid;
    std::future<pid_t> tid_known = tid.get_future();
    thread_ = std::thread([this, wait, tid = std::move(tid)]() mutable {
      tid.set_value(CurrentTid());
      const auto deadline = std::chrono::steady_clock::now() + kSafetyNet;
      wait([this, deadline] {
        if (stop_.load()) return true;
        if (std::chrono::steady_clock::now() < deadline) return false;
        timed_out_ = true;
        return true;
      });
    });
    tid_ = tid_known.get();
  }
  // A test that failed early still ends the thread (at its next look at `stop`).
  ~BlockedWaiter() {
    Stop();
    if (thread_.joinable()) Join();
  }

  bool BlockedInFutex() { return WaitUntilBlockedIn(tid_, SYS_futex); }
  void Join() { thread_.join(); }
  void Stop() { stop_ = true; }
  bool timed_out() const { return timed_out_.load(); }

 private:
  std::thread thread_;
  pid_t tid_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> timed_out_{false};
};

TEST_F(ShmRingTest, WaitForDataWakesWhenTheProducerWrites) {
  BlockedWaiter consumer([this](const std::function<bool()>& stop) { ring_.WaitForData(stop); });
  ASSERT_TRUE(consumer.BlockedInFutex());
  EXPECT_EQ(Write("x"), 1);
  consumer.Join();
  EXPECT_FALSE(consumer.timed_out());
  EXPECT_EQ(Read(1), "x");
}

TEST_F(ShmRingTest, WaitForDataWakesWhenStopTurnsTrue) {
  BlockedWaiter consumer([this](const std::function<bool()>& stop) { ring_.WaitForData(stop); });
  ASSERT_TRUE(consumer.BlockedInFutex());
  consumer.Stop();
  ring_.WakeConsumer();
  consumer.Join();
  EXPECT_FALSE(consumer.timed_out());
  EXPECT_EQ(ring_.Readable(), 0);
}

TEST_F(ShmRingTest, WaitForDataWakesWhenTheProducerCloses) {
  BlockedWaiter consumer([this](const std::function<bool()>& stop) { ring_.WaitForData(stop); });
  ASSERT_TRUE(consumer.BlockedInFutex());
  ring_.CloseAsProducer();
  consumer.Join();
  EXPECT_FALSE(consumer.timed_out());
}

TEST_F(ShmRingTest, WaitForSpaceWakesWhenTheConsumerReads) {
  ASSERT_EQ(Write(std::string(kCapacity, 'f')), static_cast<ssize_t>(kCapacity));
  BlockedWaiter producer(
      [this](const std::function<bool()>& stop) { ring_.WaitForSpace(stop); });
  ASSERT_TRUE(producer.BlockedInFutex());
  EXPECT_EQ(Read(1), "f");
  producer.Join();
  EXPECT_FALSE(producer.timed_out());
  EXPECT_EQ(Write("g"), 1);
}

TEST_F(ShmRingTest, WaitForSpaceWakesWhenTheConsumerCloses) {
  ASSERT_EQ(Write(std::string(kCapacity, 'f')), static_cast<ssize_t>(kCapacity));
  BlockedWaiter producer(
      [this](const std::function<bool()>& stop) { ring_.WaitForSpace(stop); });
  ASSERT_TRUE(producer.BlockedInFutex());
  ring_.CloseAsConsumer();
  producer.Join();
  EXPECT_FALSE(producer.timed_out());
}

}  // namespace
}  // namespace rpma_sim
