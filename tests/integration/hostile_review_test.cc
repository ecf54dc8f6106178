// hostile_review_test.cc -- what a hostile client over shared memory cannot make a server do,
// beyond hostile_peer_test's lies (raw_shm_peer.h: the client's frames written by hand into
// the segment's rings, the segment scribbled on as a peer that maps it can):
// - the segment's header names the client's pid and mapping address, which the client
//   writes; the server copies by reference (process_vm) only to and from a process whose
//   memory at that address is this very segment, so a client that names another process
//   gets no byte of it read or written;
// - once the data path moved to the segment, the TCP connection carries only DOORBELL
//   frames (PROTOCOL.md, "Shared memory"): a REQUEST sent there ends the connection;
// - nothing in the rings after a malformed connection message is acted on.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/transport/shm_ring.h"
#include "sim/transport/shm_segment.h"
#include "tests/integration/integration_support.h"
#include "tests/integration/raw_peer.h"
#include "tests/integration/raw_shm_peer.h"

namespace {

using integration::kLoopback;
using integration::kSafetyTimeoutMs;
using raw_peer::Frame;
using raw_peer::PutLe;
using raw_peer::Request;
using raw_peer::RequestBody;

constexpr uint64_t kSegmentMagic = 0x314d48534d535052;  // "RPSMSHM1", shm_segment.cc
// SegmentHeader (shm_segment.cc): magic 8, version 4, ring capacity 4, nonce 8, then
// pid[2] (int32 each) and base[2] (uint64 each), indexed by side (client 0).
constexpr size_t kClientPidOffset = 24;
constexpr size_t kClientBaseOffset = 32;

constexpr uint64_t kRegionSize = 4096;
constexpr uint8_t kFill = 0xA5;

// In this program's data: a child made by fork() has them at the same addresses.
alignas(8) volatile uint64_t g_fake_header = kSegmentMagic;  // what the server's probe reads
alignas(8) volatile char g_victim_secret[8] = {'n', 'o', 't', ' ', 'y', 'e', 't', '!'};
alignas(8) volatile char g_victim_target[8] = {'u', 'n', 't', 'o', 'u', 'c', 'h', 'd'};

// A process that is no peer of the server: a child of the test, made before the simulator
// starts, that holds a secret and reports what its target buffer holds when asked.
struct Victim {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
};
Victim g_victim;

void StartVictim() {
  int down[2], up[2];
  ASSERT_EQ(0, pipe(down));
  ASSERT_EQ(0, pipe(up));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(down[1]);
    close(up[0]);
    memcpy(const_cast<char*>(g_victim_secret), "SECRET!!", 8);
    char c = 'r';
    if (write(up[1], &c, 1) != 1) _exit(2);
    if (read(down[0], &c, 1) < 0) _exit(2);
    char target[8];
    memcpy(target, const_cast<const char*>(g_victim_target), 8);
    if (write(up[1], target, 8) != 8) _exit(2);
    _exit(0);
  }
  close(down[0]);
  close(up[1]);
  g_victim.pid = pid;
  g_victim.to_child = down[1];
  g_victim.from_child = up[0];
  char c = 0;
  ASSERT_EQ(1, read(g_victim.from_child, &c, 1));
}

// What the victim's target buffer holds now (it exits after telling).
std::string VictimTarget() {
  char c = 'q';
  if (write(g_victim.to_child, &c, 1) != 1) return "?";
  char target[8];
  if (read(g_victim.from_child, target, 8) != 8) return "?";
  return std::string(target, 8);
}

// Reads one whole frame from the server's ring, or returns false (no failure) if none came
// within `timeout_ms` (the server may have closed the connection instead).
bool TryReadFrame(raw_peer::ShmPeer& peer, int timeout_ms, uint16_t* type,
                  std::vector<uint8_t>* body) {
  rpma_sim::ShmRing& ring = peer.segment().inbound();
  long long deadline = integration::NowMs() + timeout_ms;
  uint8_t header[raw_peer::kHeaderSize];
  while (integration::NowMs() < deadline) {
    if (ring.Readable() < 0) return false;
    if (ring.Peek(header, sizeof(header))) {
      uint32_t length = 0;
      for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(header[8 + i]) << (8 * i);
      if (static_cast<size_t>(ring.Readable()) >= raw_peer::kHeaderSize + length) {
        std::vector<uint8_t> frame(raw_peer::kHeaderSize + length);
        if (ring.TryRead(frame.data(), frame.size()) != static_cast<ssize_t>(frame.size()))
          return false;
        *type = static_cast<uint16_t>(frame[6] | frame[7] << 8);
        body->assign(frame.begin() + raw_peer::kHeaderSize, frame.end());
        return true;
      }
    }
    if (ring.producer_closed() && ring.Readable() == 0) return false;
    sched_yield();
  }
  return false;
}

uint32_t StatusOf(const std::vector<uint8_t>& body) {
  return body[8] | body[9] << 8 | body[10] << 16 | static_cast<uint32_t>(body[11]) << 24;
}

class HostileShmReviewTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { StartVictim(); }
  static void TearDownTestSuite() {
    if (g_victim.pid > 0) {
      kill(g_victim.pid, SIGKILL);
      waitpid(g_victim.pid, nullptr, 0);
    }
  }

  void SetUp() override {
    ASSERT_GT(g_victim.pid, 0);
    ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_SHM));
    ibv_context* ibv_ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
    ASSERT_EQ(0, rpma_peer_new(ibv_ctx, &peer_));
    ASSERT_EQ(0, integration::ListenOnFreePort(peer_, &ep_, &port_));
    ASSERT_TRUE(guarded_.Map(kRegionSize, kFill));
    region_ = guarded_.data();
    ASSERT_EQ(0, rpma_mr_reg(peer_, region_, kRegionSize,
                             RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, &mr_));
  }

  void TearDown() override {
    shm_.reset();
    if (conn_ != nullptr) EXPECT_EQ(0, rpma_conn_delete(&conn_));
    if (mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    if (ep_ != nullptr) EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    if (peer_ != nullptr) EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  // A valid handshake over shared memory; `before_hello` may scribble on the segment first.
  void Handshake(const std::function<void(raw_peer::ShmPeer&)>& before_hello) {
    shm_ = std::make_unique<raw_peer::ShmPeer>();
    ASSERT_NO_FATAL_FAILURE(shm_->Connect(port_));
    if (before_hello) before_hello(*shm_);
    std::vector<uint8_t> hello = {0};
    std::vector<uint8_t> offer = shm_->Offer();
    hello.insert(hello.end(), offer.begin(), offer.end());
    PutLe(&hello, 0x686f7374696c65, 8);
    ASSERT_NO_FATAL_FAILURE(shm_->Send(Frame(raw_peer::kHello, hello)));
    int ep_fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
    ASSERT_TRUE(integration::WaitReadable(ep_fd, kSafetyTimeoutMs));
    rpma_conn_req* req = nullptr;
    ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &req));
    ASSERT_EQ(0, rpma_conn_req_connect(&req, nullptr, &conn_));
    uint16_t type = 0;
    std::vector<uint8_t> body;
    ASSERT_NO_FATAL_FAILURE(shm_->ReadFrame(&type, &body));
    ASSERT_EQ(raw_peer::kAccept, type);
    ASSERT_EQ(1 + 1 + 8u, body.size());
    ASSERT_EQ(1, body[1]) << "the server did not take the segment";
    shm_->UseRings();
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(conn_, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
    const rpma_mr_local* mr = mr_;
    std::vector<uint8_t> desc;
    ASSERT_EQ(0, integration::GetDescriptor(mr, &desc));
    // The descriptor: address 8, length 8, rkey 4, usage 1.
    rkey_ = desc[16] | desc[17] << 8 | desc[18] << 16 | static_cast<uint32_t>(desc[19]) << 24;
  }

  // A valid write of 8 bytes of `value` to the start of the server's region.
  Request WriteToTheRegion(char value) const {
    Request write;
    write.opcode = 0;
    write.rkey = rkey_;
    write.address = reinterpret_cast<uintptr_t>(region_);
    write.length = 8;
    write.bytes.assign(8, static_cast<uint8_t>(value));
    return write;
  }

  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  integration::GuardedRegion guarded_;  // the region, between two guard pages
  uint8_t* region_ = nullptr;
  rpma_mr_local* mr_ = nullptr;
  rpma_conn* conn_ = nullptr;
  uint32_t rkey_ = 0;
  std::unique_ptr<raw_peer::ShmPeer> shm_;
};

// The client names the victim (pid, and where its "header" is) in the segment's header before
// its HELLO, then sends a write and a read by reference (flags bit 0) whose addresses are the
// victim's. The server must not move a byte to or from a process that is not its peer.
TEST_F(HostileShmReviewTest, AForeignPidInTheSegmentHeaderNeverLetsTheServerReachThatProcess) {
  ASSERT_NO_FATAL_FAILURE(Handshake([](raw_peer::ShmPeer& peer) {
    auto* header = static_cast<uint8_t*>(const_cast<void*>(peer.segment().mapping()));
    reinterpret_cast<std::atomic<int32_t>*>(header + kClientPidOffset)->store(g_victim.pid);
    reinterpret_cast<std::atomic<uint64_t>*>(header + kClientBaseOffset)
        ->store(reinterpret_cast<uintptr_t>(&g_fake_header));
  }));

  // A write by reference: the server fetches the 8 bytes "from the requester" at the
  // victim's secret.
  Request write;
  write.sequence = 0;
  write.opcode = 0;
  write.flags = 1;
  write.rkey = rkey_;
  write.address = reinterpret_cast<uintptr_t>(region_);
  write.length = 8;
  PutLe(&write.bytes, reinterpret_cast<uintptr_t>(g_victim_secret), 8);
  ASSERT_NO_FATAL_FAILURE(shm_->Send(Frame(raw_peer::kRequest, RequestBody(write))));
  uint16_t type = 0;
  std::vector<uint8_t> body;
  if (TryReadFrame(*shm_, 3000, &type, &body) && type == raw_peer::kResponse)
    printf("the write by reference was answered with status %u\n", StatusOf(body));
  EXPECT_NE(std::string("SECRET!!"), std::string(reinterpret_cast<char*>(region_), 8))
      << "the server copied another process's memory (pid " << g_victim.pid
      << ", not its peer) into its registered region";

  // A read by reference: the server places the region's bytes "into the requester" at the
  // victim's target.
  Request read;
  read.sequence = 1;
  read.opcode = 1;
  read.flags = 1;
  read.rkey = rkey_;
  read.address = reinterpret_cast<uintptr_t>(region_) + 8;
  read.length = 8;
  PutLe(&read.bytes, reinterpret_cast<uintptr_t>(g_victim_target), 8);
  ASSERT_NO_FATAL_FAILURE(shm_->Send(Frame(raw_peer::kRequest, RequestBody(read))));
  if (TryReadFrame(*shm_, 3000, &type, &body) && type == raw_peer::kResponse)
    printf("the read by reference was answered with status %u\n", StatusOf(body));
  std::string target = VictimTarget();
  EXPECT_EQ(std::string("untouchd"), target)
      << "the server wrote its region's bytes into another process (pid " << g_victim.pid
      << ", not its peer)";
}

// After the move to shared memory, the client sends a valid write as a REQUEST frame on the
// TCP connection, where only DOORBELL frames may go. The server must end the connection and
// place nothing.
TEST_F(HostileShmReviewTest, ARequestOnTheTcpConnectionAfterTheMoveEndsTheConnection) {
  ASSERT_NO_FATAL_FAILURE(Handshake(nullptr));
  Request write = WriteToTheRegion('v');
  shm_->SendOnTcp(Frame(raw_peer::kRequest, RequestBody(write)));
  uint16_t type = 0;
  std::vector<uint8_t> body;
  if (TryReadFrame(*shm_, 2000, &type, &body) && type == raw_peer::kResponse)
    printf("the REQUEST sent on TCP was answered (on the ring) with status %u\n", StatusOf(body));
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  int ret = integration::NextEvent(conn_, 3000, &event);
  EXPECT_TRUE(ret == 0 && event == RPMA_CONN_LOST)
      << "the connection went on (rpma_conn_next_event: " << ret << ", event " << event << ")";
  EXPECT_EQ(kFill, region_[0]) << "a REQUEST from the TCP connection was executed";
}

// Over shared memory, a connection message that is malformed there (a second HELLO, here)
// followed in the same write to the ring by a valid write. PROTOCOL.md: "Nothing a peer sends
// after the frame that broke them is acted on, even where it arrived in the same read." Both
// of the connection's wires stop reading (WireConnection::Malformed).
TEST_F(HostileShmReviewTest, NothingAfterAMalformedConnectionMessageInTheRingsIsActedOn) {
  ASSERT_NO_FATAL_FAILURE(Handshake(nullptr));
  std::vector<uint8_t> second_hello = {0, 0};
  PutLe(&second_hello, 77, 8);
  std::vector<uint8_t> bytes = Frame(raw_peer::kHello, second_hello);
  Request write = WriteToTheRegion('v');
  std::vector<uint8_t> request = Frame(raw_peer::kRequest, RequestBody(write));
  bytes.insert(bytes.end(), request.begin(), request.end());
  ASSERT_NO_FATAL_FAILURE(shm_->Send(bytes));  // one write to the ring
  uint16_t type = 0;
  std::vector<uint8_t> body;
  if (TryReadFrame(*shm_, 2000, &type, &body) && type == raw_peer::kResponse)
    printf("the write after the second HELLO was answered with status %u\n", StatusOf(body));
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  int ret = integration::NextEvent(conn_, kSafetyTimeoutMs, &event);
  EXPECT_TRUE(ret == 0 && event == RPMA_CONN_LOST)
      << "rpma_conn_next_event: " << ret << ", event " << event;
  EXPECT_EQ(kFill, region_[0])
      << "the write that followed the malformed HELLO in the ring was executed (region holds '"
      << region_[0] << "')";
}

}  // namespace
