// Tests of a FrameWire on the progress engine (sim/transport/frame_wire_engine.cc) over a
// real loopback TCP connection whose other end is a plain socket of the test: frames that
// arrive in pieces are handed over whole and in order, a malformed header or an end inside a
// frame closes the wire once with the reason, and a frame larger than the socket buffers
// leaves whole while the peer reads slowly. With the engine's thread held, a polling thread
// alone reads and sends frames larger than the socket buffers, and ends the wire at a
// malformed header or the end of the stream (DeliverArrived, SendQueued). A payload sent in
// place leaves from its registered region, followed by its state byte; once the region is
// deregistered, or the payload revoked, while it leaves, the rest goes as zeros and the
// state byte says so (verbs/region_payload.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
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
#include "sim/verbs/memory_region.h"
#include "sim/verbs/region_payload.h"
#include "tests/sim/engine_wire_fixture.h"

namespace rpma_sim {
namespace {

TEST_F(EngineWireTest, AFrameArrivingInPiecesIsHandedOverWholeOnce) {
  std::vector<uint8_t> body(1000);
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint8_t> bytes = Encode(FrameType::kRequest, body);
  // Half a header, then the rest of it and part of the body, then the rest: the engine must
  // have taken each piece before the next is sent.
  const size_t cuts[] = {0, kFrameHeaderSize / 2, kFrameHeaderSize + 100, bytes.size()};
  for (int piece = 0; piece < 3; ++piece) {
    ASSERT_NO_FATAL_FAILURE(
        SendAll(peer_, bytes.data() + cuts[piece], cuts[piece + 1] - cuts[piece]));
    if (piece < 2) {
      ASSERT_TRUE(EngineTookEverything());
      EXPECT_TRUE(handler_->frames().empty()) << "a frame was handed over before it was whole";
    }
  }
  ASSERT_TRUE(handler_->WaitForFrames(1));
  std::vector<Frame> frames = handler_->frames();
  ASSERT_EQ(1u, frames.size());
  EXPECT_EQ(FrameType::kRequest, frames[0].type);
  EXPECT_EQ(body, Plain(frames[0].body));
}

TEST_F(EngineWireTest, FramesInOneWriteArriveInOrder) {
  std::vector<uint8_t> bytes;
  for (uint8_t i = 0; i < 100; ++i) {
    std::vector<uint8_t> frame = Encode(FrameType::kResponse, std::vector<uint8_t>(i, i));
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
  ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), bytes.size()));
  ASSERT_TRUE(handler_->WaitForFrames(100));
  std::vector<Frame> frames = handler_->frames();
  ASSERT_EQ(100u, frames.size());
  for (uint8_t i = 0; i < 100; ++i) EXPECT_EQ(std::vector<uint8_t>(i, i), Plain(frames[i].body));
}

// Small frames that arrive together are taken several per read: a read per header and per
// body would be two system calls per frame.
TEST_F(EngineWireTest, SmallFramesThatArriveTogetherAreTakenSeveralPerRead) {
  const int kFrames = 1000;
  std::vector<uint8_t> bytes;
  for (int i = 0; i < kFrames; ++i) {
    std::vector<uint8_t> frame =
        Encode(FrameType::kResponse, std::vector<uint8_t>(16, static_cast<uint8_t>(i)));
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
  {
    EngineHold hold;  // all of it arrives before the engine reads any
    ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), bytes.size()));
  }
  ASSERT_TRUE(handler_->WaitForFrames(kFrames));
  std::vector<Frame> frames = handler_->frames();
  ASSERT_EQ(static_cast<size_t>(kFrames), frames.size());
  for (int i = 0; i < kFrames; ++i)
    ASSERT_EQ(std::vector<uint8_t>(16, static_cast<uint8_t>(i)), Plain(frames[i].body)) << i;
  EXPECT_LT(reads_->load(), kFrames / 4) << "reads for " << kFrames << " frames of 24 bytes";
}

// What the engine read ahead is handed over even if a polling application took some of the
// frames and then stopped polling; what a poller reads it hands over itself.
TEST_F(EngineWireTest, APollerThatStopsLeavesNoFrameBehind) {
  const int kFrames = 300;
  std::vector<uint8_t> bytes;
  for (int i = 0; i < kFrames; ++i) {
    std::vector<uint8_t> frame =
        Encode(FrameType::kResponse, std::vector<uint8_t>(8, static_cast<uint8_t>(i)));
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
  {
    EngineHold hold;
    ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), bytes.size()));
    wire_->DeliverArrived();  // takes some frames on this thread, then stops
    EXPECT_FALSE(handler_->frames().empty()) << "the poller read nothing";
  }
  ASSERT_TRUE(handler_->WaitForFrames(kFrames));
  std::vector<Frame> frames = handler_->frames();
  ASSERT_EQ(static_cast<size_t>(kFrames), frames.size());
  for (int i = 0; i < kFrames; ++i)
    ASSERT_EQ(std::vector<uint8_t>(8, static_cast<uint8_t>(i)), Plain(frames[i].body)) << i;
}

TEST_F(EngineWireTest, AMalformedHeaderClosesTheWireWithTheReason) {
  std::vector<uint8_t> garbage(kFrameHeaderSize, 0xEE);
  ASSERT_NO_FATAL_FAILURE(SendAll(peer_, garbage.data(), garbage.size()));
  ASSERT_TRUE(handler_->WaitForClose());
  EXPECT_NE(std::string::npos, handler_->reason().find("malformed frame")) << handler_->reason();
  EXPECT_TRUE(handler_->frames().empty());
}

// A frame its handler finds malformed ends the wire there: the frames read ahead behind it
// in the same read are not handed over.
TEST_F(EngineWireTest, NothingReadAheadIsHandedOverAfterAMalformedMessage) {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 10; ++i) {
    std::vector<uint8_t> frame =
        Encode(FrameType::kRequest, std::vector<uint8_t>(16, static_cast<uint8_t>(i)));
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
  auto seen = std::make_shared<std::atomic<int>>(0);
  std::weak_ptr<FrameWire> weak_wire = wire_;
  handler_->AnswerWith([seen, weak_wire] {
    if (seen->fetch_add(1) + 1 != 3) return;
    if (std::shared_ptr<FrameWire> wire = weak_wire.lock()) wire->AbortMalformed("the third frame");
  });
  {
    EngineHold hold;  // all ten arrive before the engine reads any
    ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), bytes.size()));
  }
  ASSERT_TRUE(handler_->WaitForClose());
  EXPECT_EQ(3u, handler_->frames().size());
  EXPECT_NE(std::string::npos, handler_->reason().find("malformed")) << handler_->reason();
}

TEST_F(EngineWireTest, TheEndInsideAFrameClosesTheWire) {
  std::vector<uint8_t> bytes = Encode(FrameType::kRequest, std::vector<uint8_t>(64, 1));
  ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), kFrameHeaderSize + 10));
  shutdown(peer_, SHUT_WR);
  ASSERT_TRUE(handler_->WaitForClose());
  EXPECT_EQ("the connection ended inside a frame", handler_->reason());
  EXPECT_TRUE(handler_->frames().empty());
}

// 8 MiB is more than the socket buffers hold: Send takes what fits and the engine sends the
// rest as the peer reads; a second frame queued behind it follows it.
TEST_F(EngineWireTest, AFrameLargerThanTheSocketBuffersLeavesWhole) {
  std::vector<uint8_t> big(8 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i % 251);
  ASSERT_TRUE(wire_->Send(FrameType::kResponse, big));
  ASSERT_TRUE(wire_->Send(FrameType::kDisconnect, {}));
  std::vector<uint8_t> expected = Encode(FrameType::kResponse, big);
  std::vector<uint8_t> second = Encode(FrameType::kDisconnect, {});
  expected.insert(expected.end(), second.begin(), second.end());
  std::vector<uint8_t> received(expected.size());
  size_t got = 0;
  while (got < received.size()) {
    ssize_t n =
        recv(peer_, received.data() + got, std::min<size_t>(64 << 10, received.size() - got), 0);
    ASSERT_GT(n, 0) << "the wire's bytes stopped after " << got;
    got += static_cast<size_t>(n);
  }
  EXPECT_TRUE(expected == received) << "the bytes on the socket are not the two frames";
  EXPECT_TRUE(wire_->Flush(30000));
}

// The engine is held: only DeliverArrived, called in a loop as a polling application calls
// it, can take an 8 MiB frame, which the peer can only finish sending once most of it was
// read. The frame arrives in pieces, so the poller must read one still arriving.
TEST_F(EngineWireTest, APollerAloneReadsAFrameLargerThanTheSocketBuffers) {
  std::vector<uint8_t> body = Pattern(8 << 20);
  std::vector<uint8_t> bytes = Encode(FrameType::kRequest, body);
  EngineHold hold;
  std::thread sender([&] { SendAll(peer_, bytes.data(), bytes.size()); });
  auto deadline = std::chrono::steady_clock::now() + kSafety;
  while (handler_->frames().empty() && std::chrono::steady_clock::now() < deadline)
    wire_->DeliverArrived();
  hold.Release();  // a sender still blocked then finishes through the engine
  sender.join();
  std::vector<Frame> frames = handler_->frames();
  ASSERT_EQ(1u, frames.size()) << "the polling thread did not read the frame by itself";
  EXPECT_EQ(FrameType::kRequest, frames[0].type);
  EXPECT_TRUE(body == Plain(frames[0].body));
}

// The engine is held: a malformed header, or the end inside a frame, that a polling thread
// reads ends the wire there, the handler told once with the reason.
TEST_F(EngineWireTest, APollerEndsTheWireOnAMalformedHeader) {
  std::vector<uint8_t> good = Encode(FrameType::kRequest, std::vector<uint8_t>(64, 1));
  std::vector<uint8_t> garbage(kFrameHeaderSize, 0xEE);
  good.insert(good.end(), garbage.begin(), garbage.end());
  EngineHold hold;
  ASSERT_NO_FATAL_FAILURE(SendAll(peer_, good.data(), good.size()));
  auto deadline = std::chrono::steady_clock::now() + kSafety;
  while (handler_->closed() == 0 && std::chrono::steady_clock::now() < deadline)
    wire_->DeliverArrived();
  EXPECT_EQ(1, handler_->closed()) << "the polling thread did not end the wire";
  EXPECT_NE(std::string::npos, handler_->reason().find("malformed frame")) << handler_->reason();
  EXPECT_EQ(1u, handler_->frames().size()) << "the valid frame before it";
}

TEST_F(EngineWireTest, APollerEndsTheWireAtTheEndInsideAFrame) {
  std::vector<uint8_t> bytes = Encode(FrameType::kRequest, std::vector<uint8_t>(64, 1));
  EngineHold hold;
  ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), kFrameHeaderSize + 10));
  shutdown(peer_, SHUT_WR);
  auto deadline = std::chrono::steady_clock::now() + kSafety;
  while (handler_->closed() == 0 && std::chrono::steady_clock::now() < deadline)
    wire_->DeliverArrived();
  EXPECT_EQ(1, handler_->closed()) << "the polling thread did not end the wire";
  EXPECT_EQ("the connection ended inside a frame", handler_->reason());
  EXPECT_TRUE(handler_->frames().empty());
}

// The engine is held: only SendQueued, called in a loop as a polling application calls it,
// can send what the socket did not take of an 8 MiB frame, and the frame queued behind it.
TEST_F(EngineWireTest, APollerAloneSendsWhatTheSocketDidNotTake) {
  std::vector<uint8_t> big = Pattern(8 << 20);
  std::vector<uint8_t> expected = Encode(FrameType::kResponse, big);
  std::vector<uint8_t> second = Encode(FrameType::kDisconnect, {});
  expected.insert(expected.end(), second.begin(), second.end());
  std::vector<uint8_t> received(expected.size());
  std::atomic<bool> done{false};
  EngineHold hold;
  ASSERT_TRUE(wire_->Send(FrameType::kResponse, big));
  ASSERT_TRUE(wire_->Send(FrameType::kDisconnect, {}));
  EXPECT_EQ(2u, wire_->queued_frames()) << "the socket took 8 MiB at once: the test proves nothing";
  std::thread reader([&] {
    size_t got = 0;
    while (got < received.size()) {
      ssize_t n = recv(peer_, received.data() + got, received.size() - got, 0);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    done = true;
  });
  auto deadline = std::chrono::steady_clock::now() + kSafety;
  while (wire_->queued_frames() > 0 && std::chrono::steady_clock::now() < deadline)
    wire_->SendQueued();
  EXPECT_EQ(0u, wire_->queued_frames()) << "the polling thread did not send the queue by itself";
  hold.Release();  // a reader still waiting then gets the rest from the engine
  reader.join();
  EXPECT_TRUE(done);
  EXPECT_TRUE(expected == received) << "the bytes on the socket are not the two frames";
  EXPECT_TRUE(wire_->Flush(30000));
}

// Reads `size` bytes from the peer's end.
void ReceiveAll(int fd, uint8_t* data, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = recv(fd, data + got, std::min<size_t>(1 << 20, size - got), 0);
    ASSERT_GT(n, 0) << "the wire's bytes stopped after " << got;
    got += static_cast<size_t>(n);
  }
}

// A payload of `size` bytes in a registered region, sent after 3 bytes of body.
class InPlaceTest : public EngineWireTest {
 protected:
  static constexpr uint8_t kFields[3] = {7, 8, 9};

  void SendFromRegion(size_t size) {
    // Small socket buffers on both ends, whatever the host's maxima: 32 MiB stays far more
    // than they hold. A receive that stalls fails after kSafety instead of hanging.
    int small = 256 << 10;
    ASSERT_EQ(0, setsockopt(server_fd_, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
    ASSERT_EQ(0, setsockopt(peer_, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));
    timeval timeout = {std::chrono::seconds(kSafety).count(), 0};
    ASSERT_EQ(0, setsockopt(peer_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)));
    bytes_ = Pattern(size);
    region_ = MemoryRegionTable::Get().Register(nullptr, bytes_.data(), bytes_.size(), 0);
    payload_ = std::make_shared<RegionPayload>(region_, 0, bytes_.size());
    ASSERT_EQ(size + 1, payload_->size());
    ASSERT_TRUE(wire_->Send(FrameType::kRequest, {kFields[0], kFields[1], kFields[2]}, payload_));
  }

  // Reads the frame and checks its header and fields; *rest: the payload and state byte.
  void ReceiveFrame(std::vector<uint8_t>* rest) {
    uint8_t header[kFrameHeaderSize];
    ASSERT_NO_FATAL_FAILURE(ReceiveAll(peer_, header, sizeof(header)));
    FrameType type;
    uint32_t length;
    std::string error;
    ASSERT_TRUE(DecodeFrameHeader(header, &type, &length, &error)) << error;
    EXPECT_EQ(FrameType::kRequest, type);
    ASSERT_EQ(sizeof(kFields) + bytes_.size() + 1, length);
    uint8_t fields[sizeof(kFields)];
    ASSERT_NO_FATAL_FAILURE(ReceiveAll(peer_, fields, sizeof(fields)));
    EXPECT_EQ(0, memcmp(kFields, fields, sizeof(fields)));
    rest->resize(bytes_.size() + 1);
    ASSERT_NO_FATAL_FAILURE(ReceiveAll(peer_, rest->data(), rest->size()));
  }

  void TearDown() override {
    if (region_) MemoryRegionTable::Get().Deregister(region_);
    EngineWireTest::TearDown();
  }

  std::vector<uint8_t> bytes_;
  std::shared_ptr<MemoryRegion> region_;
  std::shared_ptr<RegionPayload> payload_;
};

TEST_F(InPlaceTest, APayloadLeavesFromItsRegionThenItsState) {
  ASSERT_NO_FATAL_FAILURE(SendFromRegion(8 << 20));
  std::vector<uint8_t> rest;
  ASSERT_NO_FATAL_FAILURE(ReceiveFrame(&rest));
  EXPECT_TRUE(std::equal(bytes_.begin(), bytes_.end(), rest.begin()));
  EXPECT_EQ(kPayloadIntact, rest.back());
  EXPECT_FALSE(payload_->lost());
  EXPECT_TRUE(wire_->Flush(30000));
}

// 32 MiB: more than the socket buffers hold, so the frame is still leaving when its region
// goes (deregistered, or the payload revoked) and the peer starts reading.
void ExpectZerosAfterThePart(const std::vector<uint8_t>& sent, const std::vector<uint8_t>& rest) {
  auto differs = std::mismatch(sent.begin(), sent.end(), rest.begin());
  size_t left = static_cast<size_t>(differs.first - sent.begin());
  EXPECT_LT(left, sent.size()) << "every byte left from the region";
  EXPECT_TRUE(std::all_of(rest.begin() + left, rest.end() - 1, [](uint8_t b) { return b == 0; }))
      << "after " << left << " bytes from the region, not only zeros";
  EXPECT_EQ(kPayloadLost, rest.back());
}

TEST_F(InPlaceTest, ARegionDeregisteredWhileItsBytesLeaveSendsZerosAndSaysSo) {
  ASSERT_NO_FATAL_FAILURE(SendFromRegion(32 << 20));
  MemoryRegionTable::Get().Deregister(region_);
  region_.reset();
  std::vector<uint8_t> rest;
  ASSERT_NO_FATAL_FAILURE(ReceiveFrame(&rest));
  ExpectZerosAfterThePart(bytes_, rest);
  EXPECT_TRUE(payload_->lost());
}

TEST_F(InPlaceTest, ARevokedPayloadSendsZerosAndSaysSo) {
  ASSERT_NO_FATAL_FAILURE(SendFromRegion(32 << 20));
  payload_->Revoke();
  std::vector<uint8_t> rest;
  ASSERT_NO_FATAL_FAILURE(ReceiveFrame(&rest));
  ExpectZerosAfterThePart(bytes_, rest);
  EXPECT_TRUE(payload_->lost());
}

}  // namespace
}  // namespace rpma_sim
