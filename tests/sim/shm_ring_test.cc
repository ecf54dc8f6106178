// Tests of ShmRing (sim/transport/shm_ring): copying in and out, wrap-around, a full and an
// empty ring, a corrupt control block, a closed consumer, and the doorbell handshake. The ring
// works within one process too, so a heap RingControl and buffer stand in for a segment.
#include "sim/transport/shm_ring.h"

#include <sys/uio.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

constexpr size_t kCapacity = 16;
constexpr size_t kGuardSize = 64;
constexpr uint8_t kGuardByte = 0xA5;

// How long a waiting thread waits at most before it gives up: a safety net so that a lost
// doorbell fails the test instead of hanging it, never a wait for an event.
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

TEST_F(ShmRingTest, ConsumerArmsOnAnEmptyRing) { EXPECT_TRUE(ring_.ArmConsumerDoorbell()); }

TEST_F(ShmRingTest, AWriteAfterTheConsumerArmedRingsExactlyOnce) {
  ASSERT_TRUE(ring_.ArmConsumerDoorbell());
  ASSERT_EQ(Write("a"), 1);
  EXPECT_TRUE(ring_.TakeConsumerDoorbell());
  ASSERT_EQ(Write("b"), 1);
  EXPECT_FALSE(ring_.TakeConsumerDoorbell()) << "a second doorbell for one sleep";
}

TEST_F(ShmRingTest, NoDoorbellWhileTheConsumerIsAwake) {
  ASSERT_EQ(Write("a"), 1);
  EXPECT_FALSE(ring_.TakeConsumerDoorbell());
}

TEST_F(ShmRingTest, ConsumerDoesNotArmOverBytesAlreadyThere) {
  ASSERT_EQ(Write("a"), 1);
  EXPECT_FALSE(ring_.ArmConsumerDoorbell()) << "it would sleep on a byte it could read";
  EXPECT_FALSE(ring_.TakeConsumerDoorbell()) << "a refused request must not stay asked";
}

TEST_F(ShmRingTest, ConsumerDoesNotArmOnAClosedProducer) {
  ring_.CloseAsProducer();
  EXPECT_FALSE(ring_.ArmConsumerDoorbell());
}

TEST_F(ShmRingTest, ProducerArmsOnAFullRingAndTheNextReadRingsOnce) {
  ASSERT_EQ(Write(std::string(kCapacity, 'f')), static_cast<ssize_t>(kCapacity));
  ASSERT_TRUE(ring_.ArmProducerDoorbell());
  EXPECT_EQ(Read(1), "f");
  EXPECT_TRUE(ring_.TakeProducerDoorbell());
  EXPECT_EQ(Read(1), "f");
  EXPECT_FALSE(ring_.TakeProducerDoorbell());
}

TEST_F(ShmRingTest, ProducerDoesNotArmWhileThereIsSpaceOrOnAClosedConsumer) {
  ASSERT_EQ(Write("a"), 1);
  EXPECT_FALSE(ring_.ArmProducerDoorbell());
  ASSERT_EQ(Write(std::string(kCapacity - 1, 'f')), static_cast<ssize_t>(kCapacity - 1));
  ring_.CloseAsConsumer();
  EXPECT_FALSE(ring_.ArmProducerDoorbell());
}

TEST_F(ShmRingTest, ProducerDoesNotArmOnACorruptRing) {
  control_.head.store(kCapacity + 5);
  EXPECT_FALSE(ring_.ArmProducerDoorbell());
  EXPECT_FALSE(ring_.ArmConsumerDoorbell());
}

// Two threads hand bytes over with doorbells only (no spinning on the counters after
// arming): the consumer arms, and sleeps until a doorbell unless arming was refused. A lost
// doorbell would leave it asleep (the safety net then fails the test).
TEST_F(ShmRingTest, DoorbellsAreNeverLostBetweenTwoThreads) {
  constexpr int kBytes = 20000;
  std::mutex mutex;
  std::condition_variable rung;
  int doorbells = 0;
  std::thread producer([&] {
    for (int i = 0; i < kBytes;) {
      uint8_t byte = static_cast<uint8_t>(i);
      iovec part = Part(&byte, 1);
      ssize_t n = ring_.TryWrite(&part, 1);
      ASSERT_GE(n, 0);
      i += static_cast<int>(n);
      if (n > 0 && ring_.TakeConsumerDoorbell()) {
        std::lock_guard<std::mutex> lock(mutex);
        ++doorbells;
        rung.notify_one();
      }
      if (n == 0) std::this_thread::yield();
    }
  });
  int seen_doorbells = 0;
  for (int got = 0; got < kBytes;) {
    uint8_t byte;
    ssize_t n = ring_.TryRead(&byte, 1);
    ASSERT_GE(n, 0);
    if (n == 1) {
      ASSERT_EQ(byte, static_cast<uint8_t>(got)) << "at " << got;
      ++got;
      continue;
    }
    if (!ring_.ArmConsumerDoorbell()) continue;
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(rung.wait_for(lock, kSafetyNet, [&] { return doorbells > seen_doorbells; }))
        << "asleep with " << ring_.Readable() << " bytes in the ring: a doorbell was lost";
    seen_doorbells = doorbells;
  }
  producer.join();
  EXPECT_TRUE(GuardsIntact());
}

}  // namespace
}  // namespace rpma_sim
