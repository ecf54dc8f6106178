// hostile_direct_area_test.cc -- a peer over shared memory that lies in the server's direct
// area (the in-use count of its accesses, the claim word of a placement record), which it
// writes as freely as the server does. What one such peer does must cost the server only that
// peer's connection: not every deregistration of the process, and not the progress engine
// every other connection needs.
//
// The peers are raw_shm_peer.h's (frames written by hand into the rings); one of them stays
// honest and measures how long the server takes to answer it.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/transport/direct_area.h"
#include "tests/common/kept_log.h"
#include "tests/integration/hostile_lies.h"
#include "tests/integration/integration_support.h"
#include "tests/integration/raw_handshake.h"
#include "tests/integration/raw_peer.h"
#include "tests/integration/raw_shm_peer.h"

using hostile::kFill;
using hostile::kRegionSize;
using hostile::RequestFrame;
using hostile::Target;
using integration::kSafetyTimeoutMs;
using integration::NowMs;
using raw_peer::Frame;

namespace {

// What a peer heard back for a request: its answer, or the end of its connection.
enum class Heard { kResponse, kClosed, kNothing };

class HostileDirectAreaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM));
    ASSERT_NO_FATAL_FAILURE(raw_peer::ListeningServer(&peer_, &ep_, &port_));
    ASSERT_TRUE(guarded_.Map(kRegionSize, kFill));
    ASSERT_EQ(0, rpma_mr_reg(peer_, guarded_.data(), kRegionSize,
                             RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &mr_));
  }

  void TearDown() override {
    for (auto& wire : wires_) wire->Close();
    for (rpma_conn*& conn : conns_) {
      rpma_conn_event event;
      integration::NextEvent(conn, kSafetyTimeoutMs, &event);
      EXPECT_EQ(0, rpma_conn_delete(&conn));
    }
    if (mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    if (ep_ != nullptr) EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    if (peer_ != nullptr) EXPECT_EQ(0, rpma_peer_delete(&peer_));
    EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
  }

  // A raw peer over shared memory completes a valid handshake; the server accepts with its
  // region's descriptor, which the peer reads into *target. Both sides established.
  raw_peer::ShmPeer* Connect(Target* target) {
    auto shm = std::make_unique<raw_peer::ShmPeer>();
    raw_peer::ShmPeer* wire = shm.get();
    wires_.push_back(std::move(shm));
    EXPECT_NO_FATAL_FAILURE(wire->Connect(port_));
    raw_peer::Accepted accepted;
    rpma_conn* conn = nullptr;
    raw_peer::AcceptedHandshake(wire, wire->Offer(), ep_, mr_, &conn, &accepted);
    if (conn != nullptr) conns_.push_back(conn);
    if (HasFatalFailure()) return wire;
    target->address = accepted.address;
    target->length = accepted.length;
    target->rkey = accepted.rkey;
    EXPECT_TRUE(accepted.took_segment) << "the server did not take the shared-memory offer";
    wire->UseRings();
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    EXPECT_EQ(0, integration::NextEvent(conn, kSafetyTimeoutMs, &event));
    EXPECT_EQ(RPMA_CONN_ESTABLISHED, event);
    return wire;
  }

  // An 8-byte read of the region's start, request `sequence`, as a REQUEST frame.
  static std::vector<uint8_t> ReadOf(const Target& target, uint64_t sequence) {
    raw_peer::Request read;
    read.sequence = sequence;
    read.opcode = 1;
    read.rkey = target.rkey;
    read.address = target.address;
    read.length = 8;
    return RequestFrame(read);
  }

  // Waits (the safety timeout at most) for a whole frame in `wire`'s inbound ring, or the end
  // of its connection.
  static Heard AwaitAnswer(raw_peer::ShmPeer* wire) {
    rpma_sim::ShmRing& ring = wire->segment().inbound();
    const long long deadline = NowMs() + kSafetyTimeoutMs;
    uint8_t header[raw_peer::kHeaderSize];
    while (NowMs() < deadline) {
      if (ring.Peek(header, sizeof(header))) {
        uint32_t length = 0;
        for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(header[8 + i]) << (8 * i);
        if (ring.Readable() >= static_cast<int64_t>(raw_peer::kHeaderSize + length)) {
          std::vector<uint8_t> frame(raw_peer::kHeaderSize + length);
          ring.TryRead(frame.data(), frame.size());
          return Heard::kResponse;
        }
      }
      if (ring.producer_closed() && ring.Readable() <= 0) return Heard::kClosed;
      sched_yield();
    }
    return Heard::kNothing;
  }

  // An honest read by `wire` (request `sequence`): how long the server took to answer it, in
  // milliseconds.
  static long long RoundTripMs(raw_peer::ShmPeer* wire, const Target& target, uint64_t sequence) {
    const long long start = NowMs();
    EXPECT_NO_FATAL_FAILURE(wire->Send(ReadOf(target, sequence)));
    EXPECT_EQ(Heard::kResponse, AwaitAnswer(wire)) << "the honest peer got no answer";
    return NowMs() - start;
  }

  // Two raw peers: an honest one, warmed by its read 1, and one that will lie.
  void ConnectHonestAndHostile(Target* target, raw_peer::ShmPeer** honest,
                               raw_peer::ShmPeer** hostile) {
    *honest = Connect(target);
    ASSERT_FALSE(HasFatalFailure());
    *hostile = Connect(target);
    ASSERT_FALSE(HasFatalFailure());
    RoundTripMs(*honest, *target, 1);
    ASSERT_FALSE(HasFailure());
  }

  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  integration::GuardedRegion guarded_;
  rpma_mr_local* mr_ = nullptr;
  std::vector<std::unique_ptr<raw_peer::ShmPeer>> wires_;
  std::vector<rpma_conn*> conns_;
};

// The peer says it has a direct access under way in the server's memory for ever (the in-use
// count of the server's direct area stays 1). The server's first deregistration waits the
// second it allows for it, logs that it gives up on the peer, and closes the peer's direct
// access for good. From then on nothing of that peer's can land directly, yet every later
// rpma_mr_dereg of the process waits a whole second again for the same lie
// (DirectTarget::Deregister withdraws the region from the given-up target and WaitIdle waits
// again): one peer makes every deregistration of the process a second long.
TEST_F(HostileDirectAreaTest, AfterGivingUpOnAPeerLaterDeregistrationsDoNotWaitForItAgain) {
  Target target;
  raw_peer::ShmPeer* hostile = Connect(&target);
  ASSERT_FALSE(HasFatalFailure());
  hostile->segment().peer_direct().in_use.store(1);  // an access under way, for ever

  std::vector<uint8_t> buffer(4096);
  long long took_ms[2];
  for (long long& took : took_ms) {
    rpma_mr_local* mr = nullptr;
    ASSERT_EQ(0, rpma_mr_reg(peer_, buffer.data(), buffer.size(), RPMA_MR_USAGE_WRITE_DST, &mr));
    const long long start = NowMs();
    ASSERT_EQ(0, rpma_mr_dereg(&mr));
    took = NowMs() - start;
  }
  printf("rpma_mr_dereg took %lld ms, then %lld ms\n", took_ms[0], took_ms[1]);
  EXPECT_NE(std::string::npos, LoggedLines().find("held a direct access for over"))
      << "the server did not give up on the peer's access";
  EXPECT_LT(took_ms[1], 500) << "a deregistration after the server gave up on the peer waited "
                                "for that peer's access again";
}

// The peer says it wrote one placement record and keeps that record claimed (kGrowing) for
// ever, then sends PLACED frames, 16 bytes each. For every one the server's progress engine
// runs DirectArea::ReadPlacements, which yields the core up to 1000 times for the claim
// (holding the target's mutex and the region table's reader lock) and then leaves the record
// for the next PLACED, the connection untouched: 12,000 frames (3 rings' worth) cost the
// engine twelve million sched_yield calls (seconds, where the same frames with the record free
// take about 10 ms), and an honest peer's reads meanwhile wait.
TEST_F(HostileDirectAreaTest, APeerKeepingAPlacementClaimedDoesNotStallOthers) {
  Target target;
  raw_peer::ShmPeer *honest, *hostile;
  ASSERT_NO_FATAL_FAILURE(ConnectHonestAndHostile(&target, &honest, &hostile));

  rpma_sim::DirectArea& area = hostile->segment().peer_direct();
  area.placements[area.placements_read.load() % rpma_sim::DirectArea::kPlacements].claim.store(
      rpma_sim::DirectPlacement::kGrowing);
  area.placements_written.store(area.placements_read.load() + 1);
  std::vector<uint8_t> placed;
  for (int i = 0; i < 4000; ++i) {
    std::vector<uint8_t> frame = Frame(raw_peer::kPlaced, {});
    placed.insert(placed.end(), frame.begin(), frame.end());
  }

  // The honest peer reads all the while, on a thread of its own.
  std::atomic<bool> flooding{true};
  long long honest_worst_ms = 0;
  std::thread reader([&] {
    uint64_t sequence = 2;
    while (flooding.load())
      honest_worst_ms = std::max(honest_worst_ms, RoundTripMs(honest, target, sequence++));
  });
  const long long start = NowMs();
  for (int batch = 0; batch < 3; ++batch) EXPECT_NO_FATAL_FAILURE(hostile->Send(placed));
  // The hostile peer's own read, behind its PLACED frames: answered, or its connection ended.
  EXPECT_NO_FATAL_FAILURE(hostile->Send(ReadOf(target, 1)));
  const Heard heard = AwaitAnswer(hostile);
  const long long hostile_ms = NowMs() - start;
  flooding.store(false);
  reader.join();
  printf("12000 PLACED frames and a read took %lld ms (%s); the slowest honest read %lld ms\n",
         hostile_ms,
         heard == Heard::kResponse ? "answered"
         : heard == Heard::kClosed ? "closed"
                                   : "nothing",
         honest_worst_ms);
  EXPECT_NE(Heard::kNothing, heard);
  EXPECT_LT(hostile_ms, 1000) << "12000 PLACED frames of 16 bytes kept the progress engine busy";
  EXPECT_LT(honest_worst_ms, 500) << "another peer's PLACED frames stalled this connection";
}

// The peer says it has an access under way for ever, then hangs up. Ending its connection, the
// server's queue pair goes to error and closes the peer's direct access (QueuePair::
// EnterErrorLocked -> WireLink::RevokeLocked -> ShmMode::Revoke -> DirectTarget::Close), on
// the progress engine and with the queue pair's execution lock held: the close must not wait
// there the second it allows for the access (every other connection would wait with it), but
// leave that wait to a timer. An honest peer's reads, which take microseconds, are answered
// all the while; the server still gives up on the lie once the second is over.
TEST_F(HostileDirectAreaTest, APeerThatLiesAboutAnAccessThenHangsUpDoesNotStallOthers) {
  Target target;
  raw_peer::ShmPeer *honest, *hostile;
  ASSERT_NO_FATAL_FAILURE(ConnectHonestAndHostile(&target, &honest, &hostile));
  uint64_t sequence = 2;

  hostile->segment().peer_direct().in_use.store(1);  // an access under way, for ever
  hostile->Close();                                  // then it hangs up
  // The honest peer reads on from now until the server gave up on the lie (a second): none of
  // its reads may wait long for an answer.
  long long worst_ms = 0;
  const long long until = NowMs() + kSafetyTimeoutMs;
  while (LoggedLines().find("held a direct access for over") == std::string::npos &&
         NowMs() < until) {
    worst_ms = std::max(worst_ms, RoundTripMs(honest, target, sequence++));
    ASSERT_FALSE(HasFailure());
  }
  printf("%llu reads; the slowest answer took %lld ms\n",
         static_cast<unsigned long long>(sequence - 2), worst_ms);
  EXPECT_NE(std::string::npos, LoggedLines().find("held a direct access for over"))
      << "the server did not give up on the peer's access";
  EXPECT_LT(worst_ms, 500) << "another peer's lie and hang-up stalled this connection";
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_EQ(0, integration::NextEvent(conns_.back(), kSafetyTimeoutMs, &event));
  EXPECT_EQ(RPMA_CONN_LOST, event);
  EXPECT_EQ(0, rpma_conn_delete(&conns_.back()));
  conns_.pop_back();  // its event was taken here
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
