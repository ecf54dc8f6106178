// hostile_peer_test.cc -- a peer that completes a valid handshake and then lies (issue 15):
// forged keys, ranges just outside a region or wrapping the address space, lengths that do
// not match, requests out of sequence, responses to requests never made, frames torn in the
// middle, frames that belong elsewhere; each over TCP and over shared memory (the frames
// through the segment's rings), and over shared memory also scribbles on the segment: ring
// counters, the header, the records of direct placements (the lies: hostile_lies.h), and
// another process that scribbles the segment while the server reads it.
//
// The server's registered region lies between two PROT_NONE guard pages, so a byte placed
// or read outside it kills the test. For every lie: a request the protocol allows but the
// region does not is answered as a NIC answers it (IBV_WC_REM_ACCESS_ERR; the queue pair is
// then in error and answers nothing more); a frame the protocol does not allow ends the
// connection, logged.
// Either way the server application reads RPMA_CONN_LOST, the region holds exactly what the
// valid requests put there, and a normal client is served afterwards.
#include <errno.h>
#include <gtest/gtest.h>
#include <inttypes.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "tests/common/kept_log.h"
#include "tests/integration/hostile_lies.h"
#include "tests/integration/integration_support.h"
#include "tests/integration/raw_handshake.h"
#include "tests/integration/raw_peer.h"
#include "tests/integration/raw_shm_peer.h"

using hostile::kFill;
using hostile::kRegionSize;
using hostile::Lie;
using hostile::RequestFrame;
using hostile::Target;
using hostile::WriteOf;
using integration::kSafetyTimeoutMs;
using raw_peer::Frame;
using raw_peer::Request;
using raw_peer::RequestBody;

namespace {

// Whether the simulator logged a line with `what` since the case began (KeepLogLine); prints
// it, so the test log shows each lie's outcome.
bool Logged(const char* what) {
  std::string lines = LoggedLines();
  size_t at = lines.find(what);
  if (at == std::string::npos) return false;
  size_t begin = lines.rfind('\n', at);
  begin = begin == std::string::npos ? 0 : begin + 1;
  printf("logged: %s\n", lines.substr(begin, lines.find('\n', at) - begin).c_str());
  return true;
}

enum class Transport { kTcp, kShm };

class HostilePeerTest : public ::testing::TestWithParam<std::tuple<Lie, Transport>> {
 protected:
  void SetUp() override {
    const Lie& lie = std::get<0>(GetParam());
    shm_ = std::get<1>(GetParam()) == Transport::kShm;
    if (shm_ ? lie.tcp_only : static_cast<bool>(lie.scribble))
      GTEST_SKIP() << "not a lie over " << (shm_ ? "shared memory" : "TCP");
    // The server takes the offer of a segment unless forced to TCP; the normal client
    // afterwards uses the hostile one's transport.
    ASSERT_EQ(0, rpma_sim_set_transport(shm_ ? RPMA_SIM_TRANSPORT_SHM : RPMA_SIM_TRANSPORT_TCP));
    ASSERT_NO_FATAL_FAILURE(raw_peer::ListeningServer(&peer_, &ep_, &port_));
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    ASSERT_TRUE(guarded_.Map(kRegionSize, kFill));
    region_ = guarded_.data();
    ASSERT_EQ(0, rpma_mr_reg(peer_, region_, kRegionSize,
                             RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC |
                                 RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_RECV,
                             &mr_));
  }

  void TearDown() override {
    if (wire_) wire_->Close();
    if (peer_ == nullptr) return;  // skipped
    if (conn_ != nullptr) EXPECT_EQ(0, rpma_conn_delete(&conn_));
    if (mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    EXPECT_EQ(0, rpma_ep_shutdown(&ep_));
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
    EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
  }

  // A valid HELLO; the server accepts with its region's descriptor as private data, which
  // the peer reads from the ACCEPT. Both sides established.
  void Handshake(Target* target) {
    std::vector<uint8_t> offer = {0};  // no shared-memory offer
    if (shm_) {
      auto shm = std::make_unique<raw_peer::ShmPeer>();
      ASSERT_NO_FATAL_FAILURE(shm->Connect(port_));
      offer = shm->Offer();
      shm_wire_ = shm.get();
      wire_ = std::move(shm);
    } else {
      auto tcp = std::make_unique<raw_peer::RawPeer>();
      ASSERT_NO_FATAL_FAILURE(tcp->Connect(port_));
      wire_ = std::move(tcp);
    }
    raw_peer::Accepted accepted;
    ASSERT_NO_FATAL_FAILURE(
        raw_peer::AcceptedHandshake(wire_.get(), offer, ep_, mr_, &conn_, &accepted));
    target->address = accepted.address;
    target->length = accepted.length;
    target->rkey = accepted.rkey;
    ASSERT_EQ(reinterpret_cast<uint64_t>(region_), target->address);
    ASSERT_EQ(kRegionSize, target->length);
    ASSERT_EQ(shm_, accepted.took_segment) << "the shared-memory offer, taken or not";
    if (shm_) shm_wire_->UseRings();

    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(conn_, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
  }

  // Reads a RESPONSE: its status, and how many requests it answers (PROTOCOL.md).
  void ReadResponse(uint32_t* status, uint32_t* answered) {
    uint16_t type = 0;
    std::vector<uint8_t> body;
    ASSERT_NO_FATAL_FAILURE(wire_->ReadFrame(&type, &body));
    ASSERT_EQ(raw_peer::kResponse, type);
    ASSERT_GE(body.size(), 16u);
    auto u32 = [&body](size_t at) {
      return body[at] | body[at + 1] << 8 | body[at + 2] << 16 |
             static_cast<uint32_t>(body[at + 3]) << 24;
    };
    *status = u32(8);
    *answered = u32(12) + 1;
  }

  // The region holds `landed` at its start and the fill everywhere else.
  void ExpectRegion(const std::vector<uint8_t>& landed) {
    for (size_t i = 0; i < kRegionSize; ++i) {
      uint8_t expected = i < landed.size() ? landed[i] : kFill;
      ASSERT_EQ(expected, region_[i]) << "byte " << i << " of the region";
    }
  }

  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  size_t page_ = 0;
  integration::GuardedRegion guarded_;  // the region, between two guard pages
  uint8_t* region_ = nullptr;
  rpma_mr_local* mr_ = nullptr;
  rpma_conn* conn_ = nullptr;
  bool shm_ = false;
  std::unique_ptr<raw_peer::PeerWire> wire_;
  raw_peer::ShmPeer* shm_wire_ = nullptr;  // wire_, over shared memory
};

TEST_P(HostilePeerTest, TheConnectionEndsNothingOutsideTheRegionIsTouchedOthersAreServed) {
  const Lie& lie = std::get<0>(GetParam());
  Target target;
  ASSERT_NO_FATAL_FAILURE(Handshake(&target));
  if (lie.scribble) lie.scribble(*shm_wire_);
  ASSERT_NO_FATAL_FAILURE(wire_->Send(lie.bytes(target)));
  for (size_t i = 0; i < lie.answers.size();) {
    SCOPED_TRACE("answer " + std::to_string(i));
    uint32_t status, answered;
    ASSERT_NO_FATAL_FAILURE(ReadResponse(&status, &answered));
    ASSERT_LE(i + answered, lie.answers.size()) << "answers to requests never sent";
    for (uint32_t k = 0; k < answered; ++k, ++i)
      EXPECT_EQ(lie.answers[i], status) << ibv_wc_status_str(static_cast<ibv_wc_status>(status));
  }
  if (lie.closed_logging == nullptr) {
    wire_->Close();  // the hostile peer hangs up
  } else if (lie.peer_reads) {
    ASSERT_NO_FATAL_FAILURE(wire_->ExpectClosed());
  }
  rpma_conn_event event = RPMA_CONN_UNDEFINED;
  ASSERT_EQ(0, integration::NextEvent(conn_, kSafetyTimeoutMs, &event));
  EXPECT_EQ(RPMA_CONN_LOST, event);
  if (lie.closed_logging != nullptr)
    EXPECT_TRUE(Logged(lie.closed_logging)) << "not logged: " << lie.closed_logging;
  ASSERT_NO_FATAL_FAILURE(ExpectRegion(lie.landed));
  EXPECT_EQ(0, rpma_conn_delete(&conn_));
  ASSERT_NO_FATAL_FAILURE(raw_peer::ExpectNormalConnectionWorks(peer_, ep_, port_));
}

INSTANTIATE_TEST_SUITE_P(Lies, HostilePeerTest,
                         ::testing::Combine(::testing::ValuesIn(hostile::AllLies()),
                                            ::testing::Values(Transport::kTcp, Transport::kShm)),
                         [](const ::testing::TestParamInfo<std::tuple<Lie, Transport>>& info) {
                           return std::string(std::get<0>(info.param).name) +
                                  (std::get<1>(info.param) == Transport::kShm ? "_over_shm"
                                                                              : "_over_tcp");
                         });

// Not a lie: valid writes that arrive together are answered together, each once, in order
// (PROTOCOL.md: one RESPONSE answers up to 64 successes without bytes); a read's answer, which
// carries bytes, stands alone between them.
class AnswerFoldingTest : public HostilePeerTest {};

TEST_P(AnswerFoldingTest, WritesThatArriveTogetherAreAnsweredTogether) {
  Target target;
  ASSERT_NO_FATAL_FAILURE(Handshake(&target));
  constexpr uint64_t kWrites = 10;
  std::vector<uint8_t> bytes, landed(8 * kWrites);
  for (uint64_t i = 0; i < kWrites; ++i) {
    std::vector<uint8_t> frame = RequestFrame(WriteOf(target, i, 8 * i, static_cast<uint8_t>(i)));
    bytes.insert(bytes.end(), frame.begin(), frame.end());
    std::fill(landed.begin() + 8 * i, landed.begin() + 8 * (i + 1), static_cast<uint8_t>(i));
  }
  Request read;
  read.sequence = kWrites;
  read.opcode = 1;  // a read
  read.rkey = target.rkey;
  read.address = target.address;
  read.length = 8;
  std::vector<uint8_t> read_frame = RequestFrame(read);
  bytes.insert(bytes.end(), read_frame.begin(), read_frame.end());
  std::vector<uint8_t> last = RequestFrame(WriteOf(target, kWrites + 1, 8 * kWrites, 0x77));
  bytes.insert(bytes.end(), last.begin(), last.end());
  landed.insert(landed.end(), 8, 0x77);
  ASSERT_NO_FATAL_FAILURE(wire_->Send(bytes));  // one write: the server reads them together

  uint64_t answered_writes = 0;
  int frames = 0;
  while (answered_writes < kWrites) {
    uint32_t status, answered;
    ASSERT_NO_FATAL_FAILURE(ReadResponse(&status, &answered));
    ++frames;
    EXPECT_EQ(IBV_WC_SUCCESS, status);
    answered_writes += answered;
  }
  EXPECT_EQ(kWrites, answered_writes) << "the read's answer folded into the writes'";
  EXPECT_LT(frames, static_cast<int>(kWrites)) << "no two writes' answers went together";
  uint32_t status, answered;
  ASSERT_NO_FATAL_FAILURE(ReadResponse(&status, &answered));  // the read's, with its bytes
  EXPECT_EQ(IBV_WC_SUCCESS, status);
  EXPECT_EQ(1u, answered);
  ASSERT_NO_FATAL_FAILURE(ReadResponse(&status, &answered));  // the last write's
  EXPECT_EQ(IBV_WC_SUCCESS, status);
  EXPECT_EQ(1u, answered);
  ASSERT_NO_FATAL_FAILURE(ExpectRegion(landed));
}

INSTANTIATE_TEST_SUITE_P(
    Writes, AnswerFoldingTest,
    ::testing::Combine(::testing::Values(Lie{
                           "none", nullptr, {}, nullptr, {}, true, false, nullptr}),
                       ::testing::Values(Transport::kTcp, Transport::kShm)),
    [](const ::testing::TestParamInfo<std::tuple<Lie, Transport>>& info) {
      return std::get<1>(info.param) == Transport::kShm ? "over_shm" : "over_tcp";
    });

// Over shared memory the peer may also write the segment while the server works on it:
// another process (so that the sanitizers see the server's side only) scribbles random
// bytes at random places, seeded, while the peer writes valid requests into its ring: over
// the whole segment (header, ring counters and flags, the direct areas, both rings' bytes),
// or over the rings' bytes alone (frames torn and altered as they pass). Whatever the server
// then reads, it may end the connection or execute what it finds, but it must not crash,
// hang, or touch a byte outside the region (the guard pages), and it goes on serving others.
class ScribblingPeerTest : public HostilePeerTest {
 protected:
  // One connection: the scribbler (seeded with `seed`) writes random bytes in
  // [from, segment's end) while the peer writes valid requests; then the peer hangs up.
  void ScribbleRound(uint64_t seed, bool rings_only) {
    Target target;
    ASSERT_NO_FATAL_FAILURE(Handshake(&target));
    size_t capacity = shm_wire_->ring_capacity();
    size_t size = rpma_sim::ShmSegment::SizeFor(capacity);
    size_t from = rings_only ? size - 2 * capacity : 0;
    // The scribbler writes through a second mapping of the same pages (mremap of a shared
    // mapping with an old size of 0): a fork child unmaps the simulator's own mappings it
    // inherits, as they are its parent's connections'.
    void* alias =
        mremap(const_cast<void*>(shm_wire_->segment().mapping()), 0, size, MREMAP_MAYMOVE);
    ASSERT_NE(MAP_FAILED, alias) << strerror(errno);
    uint8_t* segment = static_cast<uint8_t*>(alias);
    // The scribbler goes on until the peer stops writing (a flag in memory both processes
    // share), a yield after every 64 bytes so that the server gets to read between them.
    void* flag_page =
        mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, flag_page);
    auto* stop = static_cast<std::atomic<int>*>(flag_page);
    pid_t scribbler = fork();
    ASSERT_GE(scribbler, 0);
    if (scribbler == 0) {
      // Only memory writes and yields here: the parent has threads, and little else is
      // safe after fork.
      std::mt19937_64 random(seed);
      for (uint64_t i = 0; stop->load() == 0 && i < (uint64_t{1} << 32); ++i) {
        uint64_t r = random();
        segment[from + r % (size - from)] = static_cast<uint8_t>(r >> 56);
        if (i % 64 == 63) sched_yield();
      }
      _exit(0);
    }
    // Valid writes into the region, each with a DOORBELL, until the ring takes no more.
    rpma_sim::ShmRing& ring = shm_wire_->segment().outbound();
    int sent = 0;
    for (uint64_t sequence = 0; sequence < 20000; ++sequence) {
      std::vector<uint8_t> frame =
          RequestFrame(WriteOf(target, sequence, (sequence * 8) % kRegionSize, 'v'));
      size_t done = 0;
      long long deadline = integration::NowMs() + 500;
      while (done < frame.size() && integration::NowMs() < deadline) {
        iovec part{frame.data() + done, frame.size() - done};
        ssize_t n = ring.TryWrite(&part, 1);
        if (n < 0) break;  // a ring that reads as closed or corrupt: this side stops
        done += static_cast<size_t>(n);
        if (n == 0) sched_yield();
      }
      if (done < frame.size()) break;
      ++sent;
      shm_wire_->Ring();
    }
    stop->store(1);
    int status = 0;
    ASSERT_EQ(scribbler, waitpid(scribbler, &status, 0));
    munmap(flag_page, page_);
    munmap(alias, size);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("seed %" PRIu64 "%s: the peer wrote %d requests before the ring took no more\n", seed,
           rings_only ? " (the rings' bytes)" : " (the whole segment)", sent);
    wire_->Close();
    // The server ended the connection or the peer hung up: lost either way, in time.
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(conn_, kSafetyTimeoutMs, &event));
    EXPECT_EQ(RPMA_CONN_LOST, event);
    EXPECT_EQ(0, rpma_conn_delete(&conn_));
  }
};

TEST_P(ScribblingPeerTest, AnotherProcessScribblesTheSegmentWhileTheServerReadsIt) {
  for (uint64_t seed = 20261202; seed < 20261202 + 8; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_NO_FATAL_FAILURE(ScribbleRound(seed, seed % 2 == 1));
  }
  ASSERT_NO_FATAL_FAILURE(raw_peer::ExpectNormalConnectionWorks(peer_, ep_, port_));
}

// The fixture's parameters: a lie with a scribble runs over shared memory only.
INSTANTIATE_TEST_SUITE_P(
    Scribbles, ScribblingPeerTest,
    ::testing::Combine(
        ::testing::Values(Lie{
            "concurrently", nullptr, {}, nullptr, {}, true, false, [](raw_peer::ShmPeer&) {}}),
        ::testing::Values(Transport::kShm)),
    [](const ::testing::TestParamInfo<std::tuple<Lie, Transport>>& info) {
      return std::string(std::get<0>(info.param).name);
    });

// A client that connects and never says HELLO (a port scanner, a stuck peer) is closed once
// the handshake's time is over (WireConnection::kHelloTimeoutMs, 5 s): it does not hold an
// fd of the server for as long as it keeps its end open. Others are served meanwhile.
class SilentPeerTest : public HostilePeerTest {};

TEST_P(SilentPeerTest, AClientThatNeverSaysHelloIsClosed) {
  raw_peer::RawPeer silent;
  ASSERT_NO_FATAL_FAILURE(silent.Connect(port_));
  ASSERT_NO_FATAL_FAILURE(raw_peer::ExpectNormalConnectionWorks(peer_, ep_, port_));
  ASSERT_NO_FATAL_FAILURE(silent.ExpectClosed());  // within kSafetyTimeoutMs (10 s)
  EXPECT_TRUE(Logged("sent no HELLO in 5000 ms: closed"));
}

INSTANTIATE_TEST_SUITE_P(
    Silent, SilentPeerTest,
    ::testing::Combine(::testing::Values(Lie{
                           "silent", nullptr, {}, nullptr, {}, true, false, nullptr}),
                       ::testing::Values(Transport::kTcp)),
    [](const ::testing::TestParamInfo<std::tuple<Lie, Transport>>& info) {
      return std::string(std::get<0>(info.param).name);
    });

}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
