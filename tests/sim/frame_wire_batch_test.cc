// Tests of frames leaving a FrameWire together (SendBatch in sim/transport/frame_wire.h, and
// FrameWire::Urgency) over a real loopback TCP connection whose other end is a plain socket
// of the test: what a SendBatch holds leaves when it closes, in order, many frames per
// write; a frame for the next write waits for one (a frame sent at once, the end of a turn
// of reading, a poller's SendQueued, Close, or a write's worth of frames); the answers a
// turn of reading sends leave together, from the engine and from a poller; a poller takes
// several small frames per read; frames sent to merge fold into one while none has left.
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sim/transport/frame.h"
#include "sim/transport/frame_wire.h"
#include "tests/sim/engine_wire_fixture.h"

namespace rpma_sim {
namespace {

// The body of the i-th frame of a test: i's byte, `size` times.
std::vector<uint8_t> BodyOf(int i, size_t size = 24) {
  return std::vector<uint8_t>(size, static_cast<uint8_t>(i));
}

// The bytes of frames first .. first + count - 1 (of `type`), as they go on the stream.
std::vector<uint8_t> FramesBytes(int first, int count, FrameType type = FrameType::kResponse) {
  std::vector<uint8_t> bytes;
  for (int i = first; i < first + count; ++i) {
    std::vector<uint8_t> frame = Encode(type, BodyOf(i));
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
  return bytes;
}

class BatchWireTest : public EngineWireTest {
 protected:
  void SetUp() override {
    EngineWireTest::SetUp();
    timeval timeout{30, 0};  // a safety net: a recv that would hang fails the test instead
    ASSERT_EQ(0, setsockopt(peer_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)));
  }

  void SendFrames(int first, int count, FrameWire::Urgency urgency = FrameWire::Urgency::kNow) {
    for (int i = first; i < first + count; ++i)
      ASSERT_TRUE(wire_->Send(FrameType::kResponse, BodyOf(i), nullptr, urgency));
  }

  // Bytes the peer's socket holds, not read yet.
  int ArrivedAtPeer() {
    int pending = -1;
    EXPECT_EQ(0, ioctl(peer_, FIONREAD, &pending));
    return pending;
  }

  // The peer reads frames first .. first + count - 1, in order.
  void ExpectAtPeer(int first, int count) {
    std::vector<uint8_t> expected = FramesBytes(first, count);
    EXPECT_TRUE(expected == ReceiveAtPeer(expected.size()))
        << "not frames " << first << " to " << first + count - 1 << " in order";
  }

  // Reads exactly `size` bytes at the peer (or fewer if the stream ends or the safety net
  // times out).
  std::vector<uint8_t> ReceiveAtPeer(size_t size) {
    std::vector<uint8_t> bytes(size);
    size_t got = 0;
    while (got < size) {
      ssize_t n = recv(peer_, bytes.data() + got, size - got, 0);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    bytes.resize(got);
    return bytes;
  }
};

TEST_F(BatchWireTest, WhatABatchHoldsLeavesWhenItClosesInOneWrite) {
  EngineHold hold;  // nothing but this thread writes
  {
    SendBatch batch;
    ASSERT_NO_FATAL_FAILURE(SendFrames(0, 50));
    EXPECT_EQ(0, writes_->load()) << "a frame left while the batch was open";
    EXPECT_EQ(50u, wire_->queued_frames());
  }
  EXPECT_EQ(1, writes_->load());
  EXPECT_EQ(0u, wire_->queued_frames());
  ExpectAtPeer(0, 50);
}

TEST_F(BatchWireTest, AWriteTakesAtMostSixtyFourFrames) {
  EngineHold hold;
  {
    SendBatch batch;
    ASSERT_NO_FATAL_FAILURE(SendFrames(0, 130));
  }
  EXPECT_EQ(3, writes_->load()) << "130 frames";
  ExpectAtPeer(0, 130);
}

// Only the outermost batch sends: an inner one that closes first leaves its frames to it.
TEST_F(BatchWireTest, ANestedBatchLeavesItsFramesToTheOuterOne) {
  EngineHold hold;
  {
    SendBatch outer;
    ASSERT_NO_FATAL_FAILURE(SendFrames(0, 2));
    {
      SendBatch inner;
      ASSERT_NO_FATAL_FAILURE(SendFrames(2, 2));
    }
    EXPECT_EQ(0, writes_->load()) << "the inner batch sent";
  }
  EXPECT_EQ(1, writes_->load());
  ExpectAtPeer(0, 4);
}

// A test's MergeBodies: a one-byte body counts the frames folded into it, up to 3 a frame.
bool Count(std::vector<uint8_t>* queued, const std::vector<uint8_t>& next) {
  if (queued->size() != 1 || next.size() != 1 || (*queued)[0] + next[0] > 3) return false;
  (*queued)[0] = static_cast<uint8_t>((*queued)[0] + next[0]);
  return true;
}
bool Refuse(std::vector<uint8_t>*, const std::vector<uint8_t>&) { return false; }

// Frames sent to merge fold into the last one queued while it was sent the same way and none
// of it left, as far as the merge lets them; any other frame between them ends the fold.
TEST_F(BatchWireTest, FramesSentToMergeFoldIntoTheLastQueuedOne) {
  EngineHold hold;
  auto merging = [this](uint8_t count, FrameWire::MergeBodies merge = Count) {
    ASSERT_TRUE(wire_->SendMerging(FrameType::kResponse, {count}, merge));
  };
  {
    SendBatch batch;
    for (int i = 0; i < 4; ++i) ASSERT_NO_FATAL_FAILURE(merging(1));  // 3 fold, then a fourth
    ASSERT_NO_FATAL_FAILURE(SendFrames(7, 1));                        // ends the fold
    ASSERT_NO_FATAL_FAILURE(merging(1));
    ASSERT_NO_FATAL_FAILURE(merging(1, Refuse));  // sent another way: not folded into
    ASSERT_NO_FATAL_FAILURE(merging(1));
    EXPECT_EQ(6u, wire_->queued_frames());
    EXPECT_EQ(5u + 24u, wire_->queued_bytes());
  }
  ASSERT_NO_FATAL_FAILURE(merging(2));  // what came before it left: a frame of its own
  std::vector<uint8_t> expected;
  for (std::vector<uint8_t> frame :
       {Encode(FrameType::kResponse, {3}), Encode(FrameType::kResponse, {1}),
        Encode(FrameType::kResponse, BodyOf(7)), Encode(FrameType::kResponse, {1}),
        Encode(FrameType::kResponse, {1}), Encode(FrameType::kResponse, {1}),
        Encode(FrameType::kResponse, {2})})
    expected.insert(expected.end(), frame.begin(), frame.end());
  EXPECT_TRUE(expected == ReceiveAtPeer(expected.size()))
      << "not the frames folded as the merge allows, in order";
}

TEST_F(BatchWireTest, AFrameForTheNextWriteLeavesWithAFrameSentAtOnce) {
  EngineHold hold;
  ASSERT_NO_FATAL_FAILURE(SendFrames(0, 3, FrameWire::Urgency::kWithNextWrite));
  EXPECT_EQ(0, writes_->load()) << "a frame for the next write left by itself";
  EXPECT_EQ(0, ArrivedAtPeer());
  ASSERT_NO_FATAL_FAILURE(SendFrames(3, 1));
  EXPECT_EQ(1, writes_->load()) << "the four frames, in one write";
  ExpectAtPeer(0, 4);
}

TEST_F(BatchWireTest, AWritesWorthOfFramesForTheNextWriteLeavesByItself) {
  EngineHold hold;
  ASSERT_NO_FATAL_FAILURE(
      SendFrames(0, static_cast<int>(kFramesPerWrite) - 1, FrameWire::Urgency::kWithNextWrite));
  EXPECT_EQ(0, writes_->load());
  ASSERT_NO_FATAL_FAILURE(
      SendFrames(static_cast<int>(kFramesPerWrite) - 1, 1, FrameWire::Urgency::kWithNextWrite));
  EXPECT_EQ(1, writes_->load());
  ExpectAtPeer(0, static_cast<int>(kFramesPerWrite));
}

// The engine reads a frame from the peer: at the end of that turn, what waited for the
// next write leaves (as a request waits for the turn that reads an earlier one's answer).
TEST_F(BatchWireTest, FramesForTheNextWriteLeaveWhenATurnOfReadingEnds) {
  {
    EngineHold hold;  // so that no turn of the engine's sends them before the peer's frame
    ASSERT_NO_FATAL_FAILURE(SendFrames(0, 3, FrameWire::Urgency::kWithNextWrite));
    EXPECT_EQ(0, writes_->load());
    std::vector<uint8_t> answer = Encode(FrameType::kResponse, {7});
    ASSERT_NO_FATAL_FAILURE(SendAll(peer_, answer.data(), answer.size()));
  }
  ASSERT_TRUE(handler_->WaitForFrames(1));
  ExpectAtPeer(0, 3);
}

TEST_F(BatchWireTest, APollerSendsTheFramesForTheNextWrite) {
  EngineHold hold;
  ASSERT_NO_FATAL_FAILURE(SendFrames(0, 2, FrameWire::Urgency::kWithNextWrite));
  wire_->SendQueued();
  EXPECT_EQ(1, writes_->load());
  ExpectAtPeer(0, 2);
}

TEST_F(BatchWireTest, CloseSendsTheFramesForTheNextWriteThenEnds) {
  ASSERT_NO_FATAL_FAILURE(SendFrames(0, 2, FrameWire::Urgency::kWithNextWrite));
  wire_->Close();
  ExpectAtPeer(0, 2);
  uint8_t more;
  EXPECT_EQ(0, recv(peer_, &more, 1, 0)) << "the stream did not end after them";
}

TEST_F(BatchWireTest, FlushSendsWhatABatchOfItsThreadHolds) {
  SendBatch batch;
  ASSERT_NO_FATAL_FAILURE(SendFrames(0, 2));
  EXPECT_TRUE(wire_->Flush(30000));
  ExpectAtPeer(0, 2);
}

// The peer sends 100 frames at once; the handler answers each. The engine reads them
// several per read, and the answers of the frames of one read leave in one write.
TEST_F(BatchWireTest, TheAnswersOfATurnLeaveTogether) {
  const size_t kFrames = 100;
  handler_->AnswerWith([this] { wire_->Send(FrameType::kResponse, BodyOf(9)); });
  std::vector<uint8_t> bytes = FramesBytes(0, kFrames, FrameType::kRequest);
  {
    EngineHold hold;  // all of them arrive before the engine reads any
    ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), bytes.size()));
  }
  ASSERT_TRUE(handler_->WaitForFrames(kFrames));
  EXPECT_EQ(kFrames * (kFrameHeaderSize + 24),
            ReceiveAtPeer(kFrames * (kFrameHeaderSize + 24)).size());
  EXPECT_LE(writes_->load(), static_cast<int>(kFrames / 10)) << "writes for 100 answers";
}

// The same with the engine held: a poller reads the frames, several per read, and its
// answers leave together.
TEST_F(BatchWireTest, APollerReadsSeveralFramesPerReadAndAnswersTogether) {
  const size_t kFrames = 100;
  handler_->AnswerWith([this] { wire_->Send(FrameType::kResponse, BodyOf(9)); });
  std::vector<uint8_t> bytes = FramesBytes(0, kFrames, FrameType::kRequest);
  EngineHold hold;
  ASSERT_NO_FATAL_FAILURE(SendAll(peer_, bytes.data(), bytes.size()));
  auto deadline = std::chrono::steady_clock::now() + kSafety;
  while (handler_->frames().size() < kFrames && std::chrono::steady_clock::now() < deadline)
    wire_->DeliverArrived();
  std::vector<Frame> frames = handler_->frames();
  ASSERT_EQ(kFrames, frames.size());
  for (size_t i = 0; i < kFrames; ++i)
    ASSERT_EQ(BodyOf(static_cast<int>(i)), Plain(frames[i].body)) << i;
  EXPECT_LE(reads_->load(), static_cast<int>(kFrames / 10)) << "reads for 100 frames";
  EXPECT_LE(writes_->load(), static_cast<int>(kFrames / 10)) << "writes for 100 answers";
  EXPECT_EQ(kFrames * (kFrameHeaderSize + 24),
            ReceiveAtPeer(kFrames * (kFrameHeaderSize + 24)).size());
}

// Abort closes at once, dropping what is queued (frame_wire.h): frames that wait for the
// next write do not leave when the wire is aborted (a failed node's, a malformed peer's).
// The peer reads the end, and nothing before it.
TEST_F(BatchWireTest, AbortDropsTheFramesForTheNextWrite) {
  EngineHold hold;
  ASSERT_NO_FATAL_FAILURE(SendFrames(0, 3, FrameWire::Urgency::kWithNextWrite));
  wire_->Abort();
  uint8_t byte;
  ssize_t n = recv(peer_, &byte, 1, 0);
  EXPECT_EQ(0, n) << "the peer read " << (n > 0 ? "a frame" : "an error")
                  << " after the wire was aborted, not the end";
}

// The same for frames an open batch holds when another thread aborts the wire.
TEST_F(BatchWireTest, AbortDropsWhatABatchHolds) {
  EngineHold hold;
  {
    SendBatch batch;
    ASSERT_NO_FATAL_FAILURE(SendFrames(0, 3));
    std::thread aborter([this] { wire_->Abort(); });
    aborter.join();
  }
  uint8_t byte;
  ssize_t n = recv(peer_, &byte, 1, 0);
  EXPECT_EQ(0, n) << "the peer read " << (n > 0 ? "a frame" : "an error")
                  << " after the wire was aborted, not the end";
}

}  // namespace
}  // namespace rpma_sim
