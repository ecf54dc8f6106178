// shm_switch_doorbell_test.cc -- the DOORBELL frames ShmSwitch (sim/cm/shm_switch) sends on
// the TCP wire of a connection that moved to shared memory stay bounded.
//
// After each write to its outbound ring (and each read of its inbound one) the shared-memory
// stream takes the peer's doorbell request, which the peer writes in the segment, and, if one
// was there, queues a DOORBELL frame on the TCP wire. A peer that asks for a doorbell every
// time (one store into the segment) and never reads its TCP socket must not make the TCP
// wire queue one frame per write without bound: one DOORBELL not yet handed to the kernel
// says all there is to say.
//
// Here this side's writes are made directly on the shared-memory wire (a DISCONNECT frame each,
// standing for the answers to the peer's requests); the peer drains the ring, as a peer that
// reads its answers does, and re-arms its doorbell request each time.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "sim/cm/shm_switch.h"
#include "sim/transport/shm_segment.h"
#include "sim/verbs/wire_link.h"
#include "tests/sim/engine_wire_fixture.h"

namespace rpma_sim {
namespace {

// One DOORBELL being written, one behind it not handed to the kernel yet (shm_switch.cc).
constexpr size_t kMostFramesQueued = 2;

class ShmSwitchDoorbellTest : public EngineWireTest {};

TEST_F(ShmSwitchDoorbellTest, APeerThatAsksForDoorbellsAndNeverReadsTcpIsNotQueuedForWithoutBound) {
  // The kernel's buffers as small as it allows, so that the wire's own queue shows at once.
  int small = 4096;
  ASSERT_EQ(0, setsockopt(server_fd_, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
  ASSERT_EQ(0, setsockopt(peer_, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));

  std::shared_ptr<ShmSegment> client, server;
  ASSERT_EQ(Status::kOk, ShmSegment::Create(ShmSegment::kMinRingCapacity, &client));
  ASSERT_EQ(Status::kOk, ShmSegment::Open(client->name(), client->nonce(), &server));

  // This side is the server; wire_ (the fixture's) its TCP wire, whose peer never reads.
  auto link = std::make_shared<WireLink>(wire_);
  ShmSwitch shm;
  std::shared_ptr<FrameWire> shm_wire = shm.MoveTo(server, wire_, link);

  ShmRing& peer_reads = client->inbound();  // the server-to-client ring
  std::vector<uint8_t> drain(ShmSegment::kMinRingCapacity);
  constexpr size_t kWrites = 10000;
  for (size_t i = 0; i < kWrites; ++i) {
    peer_reads.control()->consumer_wants_doorbell.store(1);  // "ring me", every time
    ASSERT_TRUE(shm_wire->Send(FrameType::kDisconnect, {})) << "write " << i;
    ASSERT_GE(peer_reads.TryRead(drain.data(), drain.size()), 0);
  }
  printf("after %zu writes to the ring: %zu DOORBELL frames (%zu body bytes) queued on TCP\n",
         kWrites, wire_->queued_frames(), wire_->queued_bytes());
  // A DOORBELL waits on the wire, or one reached the peer's socket (where it stays, since
  // the peer never reads): under load the engine hands few of them to the kernel, each
  // saying all there is to say, and those may all fit there.
  pollfd readable = {peer_, POLLIN, 0};
  EXPECT_TRUE(wire_->queued_frames() >= 1 || poll(&readable, 1, 10000) == 1)
      << "no DOORBELL waits for the peer: its wake-up is lost";
  EXPECT_LE(wire_->queued_frames(), kMostFramesQueued)
      << "the TCP wire queues a DOORBELL for every write a peer asked one for, without bound";

  shm_wire->Abort();
}

}  // namespace
}  // namespace rpma_sim
