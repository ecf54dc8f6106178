// Tests of ShmStream (sim/transport/shm_stream): transfers larger than a ring, both
// directions at once, the end of the stream after Shutdown and PeerGone, the on_shutdown
// callback, waiting on the progress engine (a wait that finds nothing spins briefly, then
// sleeps (the engine blocks) until the peer rings its doorbell, once), and a peer that
// truncates the segment.
// The client's stream and the server's (over the segment opened from the client's) both
// live in this process; each one's doorbell calls the other's OnDoorbell, as the
// connection's TCP socket does between processes.
#include "sim/transport/shm_stream.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sim/fabric/io_service.h"
#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

using rpma_sim_test::CurrentTid;
using rpma_sim_test::WaitUntilEngineSleeps;

// Rings of the smallest size, so that a transfer of a MiB wraps many times and the writer
// finds the ring full.
constexpr size_t kRingCapacity = ShmSegment::kMinRingCapacity;
constexpr size_t kLargeTransfer = 1 << 20;
// A safety net for waits that must end, never a wait for an event.
constexpr auto kSafetyNet = std::chrono::seconds(30);

std::vector<uint8_t> Pattern(size_t size, uint32_t seed) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = seed;
  for (auto& byte : bytes) {
    x = x * 1664525u + 1013904223u;
    byte = static_cast<uint8_t>(x >> 24);
  }
  return bytes;
}

// Starts a wait of `stream` on the engine's thread, as a wire does; the future is ready once
// the wait fired.
std::future<void> StartWait(ShmStream& stream, bool for_reading) {
  auto fired = std::make_shared<std::promise<void>>();
  std::future<void> done = fired->get_future();
  boost::asio::post(IoContext(), [&stream, for_reading, fired] {
    auto ready = [fired] { fired->set_value(); };
    if (for_reading) {
      stream.AsyncWaitReadable(ready);
    } else {
      stream.AsyncWaitWritable(ready);
    }
  });
  return done;
}

bool Fired(std::future<void>& wait) {
  return wait.wait_for(kSafetyNet) == std::future_status::ready;
}

// Moves `size` bytes with `step(done, left)` (a Write or a TryRead at offset `done`),
// waiting on the engine whenever it moves nothing; false if the stream ended or broke (or a
// wait never fired).
template <typename Step>
bool MoveAll(ShmStream& stream, bool reading, size_t size, Step step) {
  for (size_t done = 0; done < size;) {
    ssize_t n = step(done, size - done);
    if (n < 0) return false;
    if (n == 0) {
      std::future<void> wait = StartWait(stream, reading);
      if (!Fired(wait)) return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

bool WriteAll(ShmStream& stream, const std::vector<uint8_t>& bytes) {
  return MoveAll(stream, /*reading=*/false, bytes.size(), [&](size_t done, size_t left) {
    iovec part{const_cast<uint8_t*>(bytes.data()) + done, left};
    return stream.Write(&part, 1);
  });
}

bool ReadExactly(ShmStream& stream, uint8_t* data, size_t size) {
  return MoveAll(stream, /*reading=*/true, size,
                 [&](size_t done, size_t left) { return stream.TryRead(data + done, left); });
}

// The engine's thread id.
pid_t EngineTid() {
  std::promise<pid_t> tid;
  boost::asio::post(IoContext(), [&tid] { tid.set_value(CurrentTid()); });
  return tid.get_future().get();
}

class ShmStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EnsureProgressEngine();
    std::shared_ptr<ShmSegment> client_segment, server_segment;
    ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client_segment), Status::kOk);
    ASSERT_EQ(ShmSegment::Open(client_segment->name(), client_segment->nonce(), &server_segment),
              Status::kOk);
    client_ = std::make_unique<ShmStream>(
        client_segment, "server",
        [this] {
          ++client_doorbells_;
          server_->OnDoorbell();
        },
        [this] { ++client_shutdowns_; });
    server_ = std::make_unique<ShmStream>(
        server_segment, "client",
        [this] {
          ++server_doorbells_;
          client_->OnDoorbell();
        },
        [this] { ++server_shutdowns_; });
  }

  void TearDown() override {
    // Waits still registered end, and nothing the engine runs later finds them gone.
    if (client_) client_->Shutdown();
    if (server_) server_->Shutdown();
    std::promise<void> drained;
    boost::asio::post(IoContext(), [&drained] { drained.set_value(); });
    drained.get_future().wait();
  }

  std::atomic<int> client_doorbells_{0};
  std::atomic<int> server_doorbells_{0};
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
    const size_t size = std::min(piece % (100 << 10) + 1, received.size() - done);
    ASSERT_TRUE(ReadExactly(*server_, received.data() + done, size)) << "at " << done;
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
      [&] { EXPECT_TRUE(ReadExactly(*server_, up_received.data(), up_received.size())); });
  EXPECT_TRUE(ReadExactly(*client_, down_received.data(), down_received.size()));
  server_reader.join();
  client_writer.join();
  server_writer.join();
  EXPECT_TRUE(up_received == up);
  EXPECT_TRUE(down_received == down);
}

TEST_F(ShmStreamTest, AnIdleWaitSleepsUntilOneDoorbell) {
  std::future<void> wait = StartWait(*server_, /*for_reading=*/true);
  // After its spin the engine sleeps: an idle connection costs no CPU.
  ASSERT_TRUE(WaitUntilEngineSleeps(EngineTid()));
  EXPECT_NE(wait.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  const std::vector<uint8_t> sent = Pattern(10, 3);
  ASSERT_TRUE(WriteAll(*client_, sent));
  ASSERT_TRUE(Fired(wait));
  EXPECT_EQ(client_doorbells_.load(), 1);
  // The reader is awake now: more bytes ring nothing.
  ASSERT_TRUE(WriteAll(*client_, sent));
  EXPECT_EQ(client_doorbells_.load(), 1);
  std::vector<uint8_t> received(2 * sent.size());
  ASSERT_TRUE(ReadExactly(*server_, received.data(), received.size()));
}

TEST_F(ShmStreamTest, AWriterWaitingForSpaceIsRungWhenThePeerReads) {
  const std::vector<uint8_t> bytes = Pattern(kRingCapacity, 9);
  ASSERT_TRUE(WriteAll(*client_, bytes));  // the ring is full now
  std::future<void> wait = StartWait(*client_, /*for_reading=*/false);
  ASSERT_TRUE(WaitUntilEngineSleeps(EngineTid()));
  uint8_t byte = 0;
  ASSERT_EQ(server_->TryRead(&byte, 1), 1);
  ASSERT_TRUE(Fired(wait));
  EXPECT_EQ(server_doorbells_.load(), 1);
}

TEST_F(ShmStreamTest, AfterShutdownTheReaderTakesTheRestThenTheEnd) {
  const std::vector<uint8_t> sent = Pattern(100, 3);
  ASSERT_TRUE(WriteAll(*client_, sent));
  client_->Shutdown();
  std::vector<uint8_t> received(sent.size());
  EXPECT_TRUE(ReadExactly(*server_, received.data(), received.size()));
  EXPECT_TRUE(received == sent);
  uint8_t byte = 0;
  EXPECT_EQ(server_->TryRead(&byte, 1), -1);
}

TEST_F(ShmStreamTest, AfterShutdownAReadLongerThanTheRestFails) {
  ASSERT_TRUE(WriteAll(*client_, Pattern(100, 4)));
  client_->Shutdown();
  std::vector<uint8_t> received(150);
  EXPECT_FALSE(ReadExactly(*server_, received.data(), received.size()));
}

TEST_F(ShmStreamTest, ShutdownEndsAWaitOfThisSide) {
  std::future<void> read = StartWait(*server_, /*for_reading=*/true);
  ASSERT_TRUE(WaitUntilEngineSleeps(EngineTid()));
  server_->Shutdown();
  EXPECT_TRUE(Fired(read));
  uint8_t byte = 0;
  EXPECT_EQ(server_->TryRead(&byte, 1), -1);
}

TEST_F(ShmStreamTest, ShutdownEndsAWaitForSpaceOfThisSide) {
  ASSERT_TRUE(WriteAll(*client_, Pattern(kRingCapacity, 9)));
  std::future<void> write = StartWait(*client_, /*for_reading=*/false);
  client_->Shutdown();
  EXPECT_TRUE(Fired(write));
  uint8_t byte = 0;
  iovec part{&byte, 1};
  EXPECT_EQ(client_->Write(&part, 1), -1);
}

TEST_F(ShmStreamTest, WritesFailAfterEitherSideShutDown) {
  const std::vector<uint8_t> bytes = Pattern(10, 5);
  iovec part{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  server_->Shutdown();
  EXPECT_EQ(client_->Write(&part, 1), -1);  // the server reads no more
  EXPECT_EQ(server_->Write(&part, 1), -1);  // the server writes no more
}

TEST_F(ShmStreamTest, PeerGoneEndsAWaitOnceTheRingIsEmpty) {
  const std::vector<uint8_t> sent = Pattern(50, 6);
  ASSERT_TRUE(WriteAll(*client_, sent));
  std::vector<uint8_t> received(sent.size());
  ASSERT_TRUE(ReadExactly(*server_, received.data(), received.size()));
  std::future<void> read = StartWait(*server_, /*for_reading=*/true);
  ASSERT_TRUE(WaitUntilEngineSleeps(EngineTid()));
  server_->PeerGone();
  EXPECT_TRUE(Fired(read));
  uint8_t byte = 0;
  EXPECT_EQ(server_->TryRead(&byte, 1), -1);
  EXPECT_TRUE(received == sent);
}

TEST_F(ShmStreamTest, AfterPeerGoneWhatThePeerWroteIsStillReadable) {
  const std::vector<uint8_t> sent = Pattern(100, 8);
  ASSERT_TRUE(WriteAll(*client_, sent));
  server_->PeerGone();
  std::vector<uint8_t> received(sent.size());
  EXPECT_TRUE(ReadExactly(*server_, received.data(), received.size()));
  EXPECT_TRUE(received == sent);
  uint8_t byte = 0;
  EXPECT_EQ(server_->TryRead(&byte, 1), -1);
}

TEST_F(ShmStreamTest, OnShutdownRunsExactlyOnce) {
  client_->Shutdown();
  client_->Shutdown();
  EXPECT_EQ(client_shutdowns_.load(), 1);
  EXPECT_EQ(server_shutdowns_.load(), 0);
}

TEST_F(ShmStreamTest, ConcurrentShutdownsRunOnShutdownOnce) {
  std::thread other([this] { client_->Shutdown(); });
  client_->Shutdown();
  other.join();
  EXPECT_EQ(client_shutdowns_.load(), 1);
}

// A same-user peer truncates the segment both sides map: every access past the file's end
// would raise SIGBUS. The guard turns it into an ended stream on both sides; the process
// goes on (a waiting reader included).
TEST(ShmStreamTruncationTest, APeerThatTruncatesTheSegmentEndsTheStreamNotTheProcess) {
  EnsureProgressEngine();
  std::shared_ptr<ShmSegment> client_segment, server_segment;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client_segment), Status::kOk);
  // What a peer holding the segment can do: open it by name before the server removes it.
  int fd = shm_open(("/" + client_segment->name()).c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ShmSegment::Open(client_segment->name(), client_segment->nonce(), &server_segment),
            Status::kOk);
  std::unique_ptr<ShmStream> server;
  ShmStream client(
      client_segment, "server", [&server] { server->OnDoorbell(); }, [] {});
  server = std::make_unique<ShmStream>(
      server_segment, "client", [&client] { client.OnDoorbell(); }, [] {});
  std::vector<uint8_t> frame = Pattern(100, 1);
  ASSERT_TRUE(WriteAll(client, frame));
  std::vector<uint8_t> got(frame.size());
  ASSERT_TRUE(ReadExactly(*server, got.data(), got.size()));
  std::future<void> wait = StartWait(*server, /*reading=*/true);
  // The waiting reader asleep first: were the engine still spinning on the ring, its access
  // and the writer's could meet the pages being replaced (harmless, but ThreadSanitizer
  // reports the replacing mmap as a write racing with the other thread's read).
  ASSERT_TRUE(WaitUntilEngineSleeps(EngineTid()));

  ASSERT_EQ(0, ftruncate(fd, 0));
  close(fd);
  // The writer's access finds the pages gone: the write fails rather than the process.
  iovec part{frame.data(), frame.size()};
  EXPECT_EQ(-1, client.Write(&part, 1));
  EXPECT_TRUE(client_segment->truncated());
  EXPECT_TRUE(server_segment->truncated());
  // The sleeping reader is rung (as the writer's doorbell would) and ends.
  server->OnDoorbell();
  ASSERT_TRUE(Fired(wait));
  EXPECT_EQ(-1, server->TryRead(got.data(), got.size()));
  client.Shutdown();
  server->Shutdown();
  std::promise<void> drained;
  boost::asio::post(IoContext(), [&drained] { drained.set_value(); });
  drained.get_future().wait();
}

}  // namespace
}  // namespace rpma_sim
