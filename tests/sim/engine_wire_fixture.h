// engine_wire_fixture.h -- what the tests of a FrameWire on the progress engine share: a
// wire over one end of a real loopback TCP connection whose other end is a plain socket of
// the test (EngineWireTest), a handler that records what it was handed, a hold on the
// engine's thread, and a stream that counts the wire's reads and writes.
#ifndef RPMA_SIM_TESTS_SIM_ENGINE_WIRE_FIXTURE_H_
#define RPMA_SIM_TESTS_SIM_ENGINE_WIRE_FIXTURE_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

#include "sim/fabric/io_service.h"
#include "sim/transport/byte_stream.h"
#include "sim/transport/frame.h"
#include "sim/transport/frame_wire.h"
#include "sim/transport/socket_stream.h"

namespace rpma_sim {

inline constexpr auto kSafety = std::chrono::seconds(30);

// What the wire handed over, for the test thread to wait on.
class RecordingHandler : public WireHandler {
 public:
  void OnFrame(Frame frame) override {
    std::function<void()> answer;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      frames_.push_back(std::move(frame));
      changed_.notify_all();
      answer = answer_;
    }
    if (answer) answer();
  }
  // From now on, each frame handed over is answered by calling `answer` (after it is
  // recorded, on the thread that handed it over).
  void AnswerWith(std::function<void()> answer) {
    std::lock_guard<std::mutex> lock(mutex_);
    answer_ = std::move(answer);
  }
  void OnWireClosed(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++closed_;
    reason_ = reason;
    changed_.notify_all();
  }
  bool WaitForFrames(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kSafety, [&] { return frames_.size() >= count; });
  }
  bool WaitForClose() {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kSafety, [&] { return closed_ > 0; });
  }
  std::vector<Frame> frames() {
    std::lock_guard<std::mutex> lock(mutex_);
    return frames_;
  }
  int closed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }
  std::string reason() {
    std::lock_guard<std::mutex> lock(mutex_);
    return reason_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Frame> frames_;
  std::function<void()> answer_;
  int closed_ = 0;
  std::string reason_;
};

inline std::vector<uint8_t> Encode(FrameType type, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> bytes(kFrameHeaderSize);
  EncodeFrameHeader(type, static_cast<uint32_t>(body.size()), bytes.data());
  bytes.insert(bytes.end(), body.begin(), body.end());
  return bytes;
}

inline void SendAll(int fd, const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// Holds the progress engine's only thread in a task of its own until released, so that
// nothing but the test's thread moves a wire meanwhile.
class EngineHold {
 public:
  EngineHold() : state_(std::make_shared<State>()) {
    std::shared_ptr<State> state = state_;
    boost::asio::post(IoContext(), [state] {
      std::unique_lock<std::mutex> lock(state->mutex);
      state->held = true;
      state->changed.notify_all();
      state->changed.wait(lock, [&] { return state->released; });
    });
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->changed.wait(lock, [&] { return state_->held; });
  }
  ~EngineHold() { Release(); }
  void Release() {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->released = true;
    state_->changed.notify_all();
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    bool held = false;
    bool released = false;
  };
  std::shared_ptr<State> state_;
};

inline std::vector<uint8_t> Pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i % 251);
  return bytes;
}

// A received body as a plain vector, to compare with what was sent.
inline std::vector<uint8_t> Plain(const FrameBody& body) { return {body.begin(), body.end()}; }

// A socket stream that counts the reads and the writes the wire makes of it.
class CountingStream : public ByteStream {
 public:
  CountingStream(std::unique_ptr<ByteStream> stream, std::shared_ptr<std::atomic<int>> reads,
                 std::shared_ptr<std::atomic<int>> writes)
      : stream_(std::move(stream)), reads_(std::move(reads)), writes_(std::move(writes)) {}
  ssize_t Write(const iovec* parts, int count) override {
    writes_->fetch_add(1);
    return stream_->Write(parts, count);
  }
  ssize_t TryRead(uint8_t* data, size_t size) override {
    reads_->fetch_add(1);
    return stream_->TryRead(data, size);
  }
  size_t ReadAheadBytes() const override { return stream_->ReadAheadBytes(); }
  bool WritesAreSystemCalls() const override { return stream_->WritesAreSystemCalls(); }
  void AsyncWaitReadable(std::function<void()> ready) override {
    stream_->AsyncWaitReadable(std::move(ready));
  }
  void AsyncWaitWritable(std::function<void()> ready) override {
    stream_->AsyncWaitWritable(std::move(ready));
  }
  void Shutdown() override { stream_->Shutdown(); }
  const std::string& peer() const override { return stream_->peer(); }

 private:
  std::unique_ptr<ByteStream> stream_;
  std::shared_ptr<std::atomic<int>> reads_;
  std::shared_ptr<std::atomic<int>> writes_;
};

// A wire on the engine over one end of a loopback connection; `peer_` is the other end.
class EngineWireTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EnsureProgressEngine();
    boost::asio::ip::tcp::acceptor acceptor(
        IoContext(), boost::asio::ip::tcp::endpoint(boost::asio::ip::address_v4::loopback(), 0));
    peer_ = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(peer_, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(acceptor.local_endpoint().port());
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(0, connect(peer_, reinterpret_cast<sockaddr*>(&address), sizeof(address)));
    boost::asio::ip::tcp::socket accepted = acceptor.accept();
    server_fd_ = accepted.native_handle();
    wire_ = std::make_shared<FrameWire>(std::make_unique<CountingStream>(
        std::make_unique<SocketStream>(std::move(accepted)), reads_, writes_));
    wire_->Start(handler_);
  }

  void TearDown() override {
    wire_->Abort();
    EXPECT_TRUE(handler_->WaitForClose());
    EXPECT_EQ(1, handler_->closed());
    if (peer_ >= 0) close(peer_);
  }

  // Waits until the engine has taken every byte that arrived on its end.
  bool EngineTookEverything() {
    auto deadline = std::chrono::steady_clock::now() + kSafety;
    for (;;) {
      int pending = 0;
      if (ioctl(server_fd_, FIONREAD, &pending) == 0 && pending == 0) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::yield();
    }
  }

  std::shared_ptr<RecordingHandler> handler_ = std::make_shared<RecordingHandler>();
  std::shared_ptr<std::atomic<int>> reads_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<int>> writes_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<FrameWire> wire_;
  int peer_ = -1;
  int server_fd_ = -1;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TESTS_SIM_ENGINE_WIRE_FIXTURE_H_
