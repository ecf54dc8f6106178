// Tests of ShmStream (sim/transport/shm_stream): a transfer larger than a ring, the end of the
// stream after Shutdown, PeerGone, and the on_shutdown callback. The client's stream and the
// server's (over the segment opened from the client's) both live in this process.
#include "sim/transport/shm_stream.h"

#include <sys/syscall.h>
#include <sys/uio.h>

#include <atomic>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

using rpma_sim_test::CurrentTid;
using rpma_sim_test::WaitUntilBlockedIn;

// More than twice a ring's 4 MiB, so the transfer wraps and the writer finds the ring full.
constexpr size_t kLargeTransfer = 10 << 20;

std::vector<uint8_t> Pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = seed;
  for (auto& byte : bytes) {
    x = x * 1664525u + 1013904223u;
    byte = static_cast<uint8_t>(x >> 24);
  }
  return bytes;
}

// Writes all of `bytes`, waiting for space; false if the stream broke first.
bool WriteAll(ByteStream& stream, const uint8_t* bytes, size_t size) {
  while (size > 0) {
    iovec part{const_cast<uint8_t*>(bytes), size};
    ssize_t n = stream.Write(&part, 1, /*dont_wait=*/false);
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool WriteAll(ByteStream& stream, const std::vector<uint8_t>& bytes) {
  return WriteAll(stream, bytes.data(), bytes.size());
}

class ShmStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::shared_ptr<ShmSegment> client_segment, server_segment;
    ASSERT_EQ(ShmSegment::Create(&client_segment), Status::kOk);
    ASSERT_EQ(ShmSegment::Open(client_segment->name(), client_segment->nonce(), &server_segment),
              Status::kOk);
    client_ = std::make_unique<ShmStream>(client_segment, "server", [this] { ++client_shutdowns_; });
    server_ = std::make_unique<ShmStream>(server_segment, "client", [this] { ++server_shutdowns_; });
  }

  // Starts `call` on a thread and returns once that thread sleeps in the futex.
  template <typename Result>
  std::future<Result> StartBlocked(std::function<Result()> call) {
    std::promise<pid_t> tid;
    std::future<pid_t> tid_known = tid.get_future();
    std::future<Result> result =
        std::async(std::launch::async, [tid = std::move(tid), call]() mutable {
          tid.set_value(CurrentTid());
          return call();
        });
    const pid_t reader = tid_known.get();
    EXPECT_TRUE(WaitUntilBlockedIn(reader, SYS_futex));
    return result;
  }

  std::atomic<int> client_shutdowns_{0};
  std::atomic<int> server_shutdowns_{0};
  std::unique_ptr<ShmStream> client_;
  std::unique_ptr<ShmStream> server_;
};

TEST_F(ShmStreamTest, PeerNamesTheTransport) {
  EXPECT_EQ(client_->peer(), "server (shm)");
  EXPECT_EQ(server_->peer(), "client (shm)");
}

TEST_F(ShmStreamTest, TransferLargerThanTheRingArrivesByteExact) {
  const std::vector<uint8_t> sent = Pattern(kLargeTransfer, 7);
  std::thread writer([&] { EXPECT_TRUE(WriteAll(*client_, sent)); });
  std::vector<uint8_t> received(sent.size());
  // Uneven pieces, so that reads start and end anywhere in the ring.
  size_t done = 0;
  for (size_t piece = 1; done < received.size(); piece = piece * 3 + 12345) {
    const size_t size = std::min(piece % (1 << 20) + 1, received.size() - done);
    ASSERT_TRUE(server_->ReadExactly(received.data() + done, size)) << "at " << done;
    done += size;
  }
  writer.join();
  EXPECT_TRUE(received == sent);
}

TEST_F(ShmStreamTest, BothDirectionsAtOnce) {
  const std::vector<uint8_t> up = Pattern(kLargeTransfer, 1);
  const std::vector<uint8_t> down = Pattern(kLargeTransfer, 2);
  std::thread client_writer([&] { EXPECT_TRUE(WriteAll(*client_, up)); });
  std::thread server_writer([&] { EXPECT_TRUE(WriteAll(*server_, down)); });
  std::vector<uint8_t> up_received(up.size()), down_received(down.size());
  std::thread server_reader(
      [&] { EXPECT_TRUE(server_->ReadExactly(up_received.data(), up_received.size())); });
  EXPECT_TRUE(client_->ReadExactly(down_received.data(), down_received.size()));
  server_reader.join();
  client_writer.join();
  server_writer.join();
  EXPECT_TRUE(up_received == up);
  EXPECT_TRUE(down_received == down);
}

TEST_F(ShmStreamTest, AfterShutdownTheReaderTakesTheRestThenTheEnd) {
  const std::vector<uint8_t> sent = Pattern(100, 3);
  ASSERT_TRUE(WriteAll(*client_, sent));
  client_->Shutdown();
  std::vector<uint8_t> received(sent.size());
  EXPECT_TRUE(server_->ReadExactly(received.data(), received.size()));
  EXPECT_TRUE(received == sent);
  uint8_t byte = 0;
  EXPECT_FALSE(server_->ReadExactly(&byte, 1));
}

TEST_F(ShmStreamTest, AfterShutdownAReadLongerThanTheRestFails) {
  ASSERT_TRUE(WriteAll(*client_, Pattern(100, 4)));
  client_->Shutdown();
  std::vector<uint8_t> received(150);
  EXPECT_FALSE(server_->ReadExactly(received.data(), received.size()));
}

TEST_F(ShmStreamTest, ShutdownWakesABlockedReaderOfThePeer) {
  std::future<bool> read = StartBlocked<bool>([this] {
    uint8_t byte = 0;
    return server_->ReadExactly(&byte, 1);
  });
  client_->Shutdown();
  EXPECT_FALSE(read.get());
}

TEST_F(ShmStreamTest, ShutdownWakesABlockedReaderOfThisSide) {
  std::future<bool> read = StartBlocked<bool>([this] {
    uint8_t byte = 0;
    return server_->ReadExactly(&byte, 1);
  });
  server_->Shutdown();
  EXPECT_FALSE(read.get());
}

TEST_F(ShmStreamTest, ShutdownEndsABlockedWriterOfThisSide) {
  const std::vector<uint8_t> bytes = Pattern(1 << 20, 9);
  iovec part{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  while (client_->Write(&part, 1, /*dont_wait=*/true) > 0) {
  }
  std::future<ssize_t> write =
      StartBlocked<ssize_t>([&] { return client_->Write(&part, 1, /*dont_wait=*/false); });
  client_->Shutdown();
  EXPECT_EQ(write.get(), -1);
}

TEST_F(ShmStreamTest, WritesFailAfterEitherSideShutDown) {
  const std::vector<uint8_t> bytes = Pattern(10, 5);
  iovec part{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  server_->Shutdown();
  EXPECT_EQ(client_->Write(&part, 1, /*dont_wait=*/true), -1);  // the server reads no more
  EXPECT_EQ(server_->Write(&part, 1, /*dont_wait=*/true), -1);  // the server writes no more
}

TEST_F(ShmStreamTest, PeerGoneEndsABlockedReadOnceTheRingIsEmpty) {
  const std::vector<uint8_t> sent = Pattern(50, 6);
  ASSERT_TRUE(WriteAll(*client_, sent));
  std::vector<uint8_t> received(100);
  std::future<bool> read =
      StartBlocked<bool>([&] { return server_->ReadExactly(received.data(), received.size()); });
  server_->PeerGone();
  EXPECT_FALSE(read.get());
  EXPECT_TRUE(std::equal(sent.begin(), sent.end(), received.begin()));
}

TEST_F(ShmStreamTest, AfterPeerGoneWhatThePeerWroteIsStillReadable) {
  const std::vector<uint8_t> sent = Pattern(100, 8);
  ASSERT_TRUE(WriteAll(*client_, sent));
  server_->PeerGone();
  std::vector<uint8_t> received(sent.size());
  EXPECT_TRUE(server_->ReadExactly(received.data(), received.size()));
  EXPECT_TRUE(received == sent);
  uint8_t byte = 0;
  EXPECT_FALSE(server_->ReadExactly(&byte, 1));
}

TEST_F(ShmStreamTest, OnShutdownRunsExactlyOnce) {
  client_->Shutdown();
  client_->Shutdown();
  EXPECT_EQ(client_shutdowns_.load(), 1);
  EXPECT_EQ(server_shutdowns_.load(), 0);
  client_.reset();
  EXPECT_EQ(client_shutdowns_.load(), 1);
}

TEST_F(ShmStreamTest, ConcurrentShutdownsRunOnShutdownOnce) {
  std::thread other([this] { client_->Shutdown(); });
  client_->Shutdown();
  other.join();
  EXPECT_EQ(client_shutdowns_.load(), 1);
}

}  // namespace
}  // namespace rpma_sim
