// hostile_peer_test.cc -- a peer that completes a valid handshake and then lies (issue 15):
// forged keys, ranges just outside a region or wrapping the address space, lengths that do
// not match, requests out of sequence, responses to requests never made, frames torn in the
// middle, frames that belong elsewhere; each over TCP and over shared memory (the frames
// through the segment's rings), and over shared memory also scribbles on the segment: ring
// counters, the header, the records of direct placements.
//
// The server's registered region lies between two PROT_NONE guard pages, so a byte placed
// or read outside it kills the test. For every lie: a request the protocol allows but the
// region does not is answered as a NIC answers it (IBV_WC_REM_ACCESS_ERR; the queue pair is
// then in error and answers nothing more); a frame the protocol does not allow ends the
// connection, logged.
// Either way the server application reads RPMA_CONN_LOST, the region holds exactly what the
// valid requests put there, and a normal client is served afterwards.
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <random>
#include <tuple>
#include <string>
#include <vector>

#include "tests/common/kept_log.h"
#include "tests/integration/integration_support.h"
#include "tests/integration/raw_peer.h"
#include "tests/integration/raw_shm_peer.h"

using integration::kLoopback;
using integration::kSafetyTimeoutMs;
using raw_peer::Frame;
using raw_peer::Request;
using raw_peer::RequestBody;

namespace {

constexpr uint64_t kRegionSize = 4096;
constexpr uint8_t kFill = 0xA5;
constexpr uint64_t kTop = ~uint64_t{0};

enum Opcode : uint8_t { kWrite = 0, kRead = 1, kAtomicWrite = 2, kFlush = 3, kSend = 4 };

// What the server's region descriptor told the peer.
struct Target {
  uint64_t address = 0;
  uint64_t length = 0;
  uint32_t rkey = 0;
};

struct Lie {
  const char *name;
  // The bytes the peer sends after the handshake.
  std::function<std::vector<uint8_t>(const Target &)> bytes;
  // The statuses of the RESPONSE frames it must get back, in order.
  std::vector<ibv_wc_status> answers;
  // Not null: the simulator must then close the connection (a frame the protocol does not
  // allow), with a log line that says this. Null: it keeps serving it, and the peer hangs up.
  const char *closed_logging;
  // What valid requests among the lies wrote at the region's start (nothing: empty).
  std::vector<uint8_t> landed;
  // False: the peer reads nothing more after its lie, so only the server application's
  // RPMA_CONN_LOST tells that the simulator ended the connection.
  bool peer_reads = true;
  // Over TCP only: over shared memory the protocol allows it.
  bool tcp_only = false;
  // Over shared memory only: what the peer does to the segment before it sends the bytes.
  std::function<void(raw_peer::ShmPeer &)> scribble;
};

Request WriteOf(const Target &t, uint64_t sequence, uint64_t offset, uint8_t byte) {
  Request r;
  r.sequence = sequence;
  r.opcode = kWrite;
  r.rkey = t.rkey;
  r.address = t.address + offset;
  r.length = 8;
  r.bytes.assign(8, byte);
  return r;
}

std::vector<uint8_t> RequestFrame(const Request &r) {
  return Frame(raw_peer::kRequest, RequestBody(r));
}

std::vector<uint8_t> Concat(std::vector<uint8_t> a, const std::vector<uint8_t> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `count` reads of `length` bytes at the region's start, in sequence.
std::vector<uint8_t> Reads(const Target &t, uint64_t count, uint64_t length) {
  std::vector<uint8_t> bytes;
  for (uint64_t sequence = 0; sequence < count; ++sequence) {
    Request read;
    read.sequence = sequence;
    read.opcode = kRead;
    read.rkey = t.rkey;
    read.address = t.address;
    read.length = length;
    std::vector<uint8_t> frame = RequestFrame(read);
    bytes.insert(bytes.end(), frame.begin(), frame.end());
  }
  return bytes;
}

std::vector<Lie> AllLies() {
  const ibv_wc_status kAccess = IBV_WC_REM_ACCESS_ERR;
  std::vector<Lie> all;
  // Requests the protocol allows and the region refuses.
  all.push_back({"write_with_a_forged_rkey", [](const Target &t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.rkey ^= 0x5a5a;
                   return RequestFrame(r);
                 }, {kAccess}, nullptr, {}});
  all.push_back({"write_one_byte_past_the_end", [](const Target &t) {
                   return RequestFrame(WriteOf(t, 0, kRegionSize - 7, 'x'));
                 }, {kAccess}, nullptr, {}});
  all.push_back({"write_one_byte_before_the_start", [](const Target &t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.address = t.address - 1;
                   return RequestFrame(r);
                 }, {kAccess}, nullptr, {}});
  all.push_back({"read_one_byte_past_the_end", [](const Target &t) {
                   Request r;
                   r.opcode = kRead;
                   r.rkey = t.rkey;
                   r.address = t.address + 1;
                   r.length = kRegionSize;
                   return RequestFrame(r);
                 }, {kAccess}, nullptr, {}});
  all.push_back({"read_wrapping_the_address_space", [](const Target &t) {
                   Request r;
                   r.opcode = kRead;
                   r.rkey = t.rkey;
                   r.address = kTop - 7;
                   r.length = 16;  // ends, wrapped, at address 8
                   return RequestFrame(r);
                 }, {kAccess}, nullptr, {}});
  all.push_back({"atomic_write_at_the_top_of_the_address_space", [](const Target &t) {
                   Request r;
                   r.opcode = kAtomicWrite;
                   r.rkey = t.rkey;
                   r.address = kTop - 7;
                   r.length = 8;
                   return RequestFrame(r);
                 }, {kAccess}, nullptr, {}});
  all.push_back({"flush_starting_past_the_end", [](const Target &t) {
                   Request r;
                   r.opcode = kFlush;
                   r.flush_type = 1;
                   r.rkey = t.rkey;
                   r.address = t.address + kRegionSize;
                   r.length = kTop;
                   return RequestFrame(r);
                 }, {kAccess}, nullptr, {}});
  // The queue pair is in error after the first: nobody answers the second, and the
  // requester's retries run out, which the simulator tells it at once.
  all.push_back({"a_request_after_an_access_error_goes_unanswered", [](const Target &t) {
                   Request forged = WriteOf(t, 0, 0, 'x');
                   forged.rkey ^= 1;
                   return Concat(RequestFrame(forged), RequestFrame(WriteOf(t, 1, 0, 'y')));
                 }, {kAccess, IBV_WC_RETRY_EXC_ERR}, nullptr, {}});
  // A valid write first: it lands, and the lie after it changes nothing more.
  all.push_back({"a_valid_write_then_a_forged_one", [](const Target &t) {
                   Request forged = WriteOf(t, 1, 8, 'z');
                   forged.rkey ^= 1;
                   return Concat(RequestFrame(WriteOf(t, 0, 0, 'v')), RequestFrame(forged));
                 }, {IBV_WC_SUCCESS, kAccess}, nullptr, std::vector<uint8_t>(8, 'v')});

  // Frames the protocol does not allow: the connection ends.
  all.push_back({"write_whose_length_field_overflows", [](const Target &t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.length = kTop - 7;
                   return RequestFrame(r);
                 }, {}, "request length does not match its bytes", {}});
  all.push_back({"write_longer_than_its_bytes", [](const Target &t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.length = 16;
                   return RequestFrame(r);
                 }, {}, "request length does not match its bytes", {}});
  all.push_back({"read_longer_than_any_frame", [](const Target &t) {
                   Request r;
                   r.opcode = kRead;
                   r.rkey = t.rkey;
                   r.address = t.address;
                   r.length = kTop;
                   return RequestFrame(r);
                 }, {}, "read too large", {}});
  all.push_back({"a_request_repeating_its_sequence", [](const Target &t) {
                   return Concat(RequestFrame(WriteOf(t, 5, 0, 'a')),
                                 RequestFrame(WriteOf(t, 5, 8, 'b')));
                 }, {IBV_WC_SUCCESS}, "a request out of sequence", std::vector<uint8_t>(8, 'a')});
  all.push_back({"a_request_going_back_in_sequence", [](const Target &t) {
                   return Concat(RequestFrame(WriteOf(t, 7, 0, 'a')),
                                 RequestFrame(WriteOf(t, 3, 8, 'b')));
                 }, {IBV_WC_SUCCESS}, "a request out of sequence", std::vector<uint8_t>(8, 'a')});
  // No receive is posted: a real send queue holds at most max_qp_wr (32768) of them.
  all.push_back({"more_sends_than_any_send_queue_holds", [](const Target &) {
                   std::vector<uint8_t> bytes;
                   for (uint64_t sequence = 0; sequence <= 32768; ++sequence) {
                     Request send;
                     send.sequence = sequence;
                     send.opcode = kSend;
                     std::vector<uint8_t> frame = RequestFrame(send);
                     bytes.insert(bytes.end(), frame.begin(), frame.end());
                   }
                   return bytes;
                 }, {}, "more requests waiting for a receive than any send queue holds", {}});
  // No receive is posted either: a requester keeps at most a window (64 MiB) of bytes
  // unanswered at its responder; 1-MiB sends pass it at the 64th (each frame holds a header
  // too).
  all.push_back({"sends_past_the_window", [](const Target &) {
                   std::vector<uint8_t> bytes;
                   for (uint64_t sequence = 0; sequence < 65; ++sequence) {
                     Request send;
                     send.sequence = sequence;
                     send.opcode = kSend;
                     send.length = 1 << 20;
                     send.bytes.assign(send.length, static_cast<uint8_t>(sequence));
                     std::vector<uint8_t> frame = RequestFrame(send);
                     bytes.insert(bytes.end(), frame.begin(), frame.end());
                   }
                   return bytes;
                 }, {}, "more bytes under way than the window (64 MiB) allows", {}});
  // A read's answer counts against the window too: one alone may be as large as a frame,
  // but not behind a send that waits for a receive.
  all.push_back({"a_read_past_the_window_behind_a_waiting_send", [](const Target &t) {
                   Request send;
                   send.opcode = kSend;
                   Request read;
                   read.sequence = 1;
                   read.opcode = kRead;
                   read.rkey = t.rkey;
                   read.address = t.address;
                   read.length = 64 << 20;
                   return Concat(RequestFrame(send), RequestFrame(read));
                 }, {}, "more bytes under way than the window (64 MiB) allows", {}});
  // Reads it never reads the answers of. Answers waiting for the peer count against its
  // window (64 MiB: 16,320 answers of 4 KiB), behind the kernel's socket buffers (the
  // server's send buffer, 4 MiB at most by default, and the peer's receive buffer, kept
  // small): 20,000 reads pass it.
  all.push_back({"reads_whose_answers_it_never_reads", [](const Target &t) {
                   return Reads(t, 20000, kRegionSize);
                 }, {}, "a peer that does not read its answers", {}, false});
  // Answers without bytes hardly fill a window: past two send queues' worth of answers
  // waiting (the peer's and this side's own requests) the process stops queueing for it.
  // The kernel's buffers take 4 MiB of 32-byte answers first.
  all.push_back({"empty_reads_whose_answers_it_never_reads", [](const Target &t) {
                   return Reads(t, 2 * 32768 + (4 << 20) / 32 + 4096, 0);
                 }, {}, "a peer that does not read its answers", {}, false});
  all.push_back({"a_response_to_no_request", [](const Target &) {
                   std::vector<uint8_t> body(16, 0);
                   return Frame(raw_peer::kResponse, body);
                 }, {}, "a response to no request under way", {}});
  all.push_back({"a_response_with_read_bytes_to_no_request", [](const Target &) {
                   std::vector<uint8_t> body(16 + kRegionSize, 0);
                   return Frame(raw_peer::kResponse, body);
                 }, {}, "a response to no request under way", {}});
  all.push_back({"a_request_by_address_over_tcp", [](const Target &t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.flags = 1;
                   r.bytes.clear();
                   raw_peer::PutLe(&r.bytes, 0x1000, 8);
                   return RequestFrame(r);
                 }, {}, "a request by address this side cannot follow", {}, true, true});
  all.push_back({"a_remote_error_no_fault_rule_gives", [](const Target &t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.flags = 2;
                   std::vector<uint8_t> status;
                   raw_peer::PutLe(&status, IBV_WC_REM_ACCESS_ERR, 4);
                   r.bytes.insert(r.bytes.begin(), status.begin(), status.end());
                   return RequestFrame(r);
                 }, {}, "a remote error no fault rule gives", {}});
  all.push_back({"an_unknown_opcode", [](const Target &t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.opcode = 9;
                   return RequestFrame(r);
                 }, {}, "unknown request kind", {}});
  all.push_back({"a_doorbell_in_the_data_stream", [](const Target &) {
                   return Frame(raw_peer::kDoorbell, {});
                 }, {}, "a doorbell", {}});
  all.push_back({"placed_without_direct_access", [](const Target &) {
                   return Frame(raw_peer::kPlaced, {});
                 }, {}, "a PLACED frame where no direct access is", {}, true, true});
  all.push_back({"a_second_hello", [](const Target &) {
                   std::vector<uint8_t> body = {0, 0};
                   raw_peer::PutLe(&body, 77, 8);
                   return Frame(raw_peer::kHello, body);
                 }, {}, "a second HELLO", {}});
  all.push_back({"an_accept_from_the_client", [](const Target &) {
                   std::vector<uint8_t> body = {0, 0};
                   raw_peer::PutLe(&body, 77, 8);
                   return Frame(raw_peer::kAccept, body);
                 }, {}, "a connection message for the other side", {}});
  all.push_back({"a_reject_from_the_client", [](const Target &) {
                   return Frame(raw_peer::kReject, {});
                 }, {}, "a connection message for the other side", {}});
  all.push_back({"a_frame_of_another_protocol_version", [](const Target &t) {
                   std::vector<uint8_t> frame = RequestFrame(WriteOf(t, 0, 0, 'x'));
                   frame[4] = 5;
                   return frame;
                 }, {}, "protocol version 5", {}});

  // Torn frames: the peer stops in the middle and hangs up; nothing executes.
  all.push_back({"a_request_torn_in_its_bytes", [](const Target &t) {
                   std::vector<uint8_t> frame = RequestFrame(WriteOf(t, 0, 0, 'x'));
                   frame.resize(frame.size() - 3);
                   return frame;
                 }, {}, nullptr, {}});
  all.push_back({"a_header_torn_in_two", [](const Target &t) {
                   std::vector<uint8_t> frame = RequestFrame(WriteOf(t, 0, 0, 'x'));
                   frame.resize(7);
                   return frame;
                 }, {}, nullptr, {}});
  // Over shared memory, the peer scribbles on the segment it shares with the server.
  auto nothing = [](const Target &) { return std::vector<uint8_t>(); };
  auto valid_write = [](const Target &t) { return RequestFrame(WriteOf(t, 0, 0, 'v')); };
  const std::vector<uint8_t> v(8, 'v');
  all.push_back({"ring_head_ahead_of_its_tail_by_more_than_the_ring", nothing, {}, "ring from", {},
                 true, false, [](raw_peer::ShmPeer &peer) {
                   rpma_sim::RingControl *ring = peer.segment().outbound().control();
                   ring->head.store(ring->tail.load() + peer.ring_capacity() + 1);
                   peer.Ring();
                 }});
  all.push_back({"ring_head_behind_its_tail", nothing, {}, "ring from", {}, true, false,
                 [](raw_peer::ShmPeer &peer) {
                   rpma_sim::RingControl *ring = peer.segment().outbound().control();
                   ring->tail.store(ring->head.load() + 1);
                   peer.Ring();
                 }});
  // The server's ring to the peer: its consumer's counter is the peer's to write.
  all.push_back({"the_answers_ring_tail_ahead_of_its_head", valid_write, {}, "ring to", v, true,
                 false, [](raw_peer::ShmPeer &peer) {
                   rpma_sim::RingControl *ring = peer.segment().inbound().control();
                   ring->tail.store(ring->head.load() + 5);
                 }});
  // Read once when the server opened the segment, never again: scribbled, they change
  // nothing, and the connection goes on.
  all.push_back({"the_header_scribbled", valid_write, {IBV_WC_SUCCESS}, nullptr, v, true, false,
                 [](raw_peer::ShmPeer &peer) {
                   memset(const_cast<void *>(peer.segment().mapping()), 0xFF, 48);
                 }});
  // The records of what the peer placed directly: the server checks each against its own
  // regions, and counters further apart than the records close direct access.
  all.push_back({"placement_records_scribbled", valid_write, {IBV_WC_SUCCESS}, nullptr, v, true,
                 false, [](raw_peer::ShmPeer &peer) {
                   rpma_sim::DirectArea &area = peer.segment().peer_direct();
                   memset(static_cast<void *>(area.placements), 0xA5, sizeof(area.placements));
                   area.placements_written.store(~uint64_t{0} / 3);
                 }});
  // The peer truncates the segment both sides map: the server's next access to the rings
  // would raise SIGBUS; the guard (mapping_guard.h) ends the connection instead.
  all.push_back({"the_segment_truncated", nothing, {}, "truncated the shared memory segment",
                 {}, false, false, [](raw_peer::ShmPeer &peer) {
                   peer.Truncate();
                   peer.Ring();
                 }});
  return all;
}

// Whether the simulator logged a line with `what` since the case began (KeepLogLine); prints
// it, so the test log shows each lie's outcome.
bool Logged(const char *what) {
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
    const Lie &lie = std::get<0>(GetParam());
    shm_ = std::get<1>(GetParam()) == Transport::kShm;
    if (shm_ ? lie.tcp_only : static_cast<bool>(lie.scribble))
      GTEST_SKIP() << "not a lie over " << (shm_ ? "shared memory" : "TCP");
    // The server takes the offer of a segment unless forced to TCP; the normal client
    // afterwards uses the hostile one's transport.
    ASSERT_EQ(0, rpma_sim_set_transport(shm_ ? RPMA_SIM_TRANSPORT_SHM : RPMA_SIM_TRANSPORT_TCP));
    ForgetLoggedLines();
    ASSERT_EQ(0, rpma_log_set_function(KeepLogLine));
    ibv_context *ibv_ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx));
    ASSERT_EQ(0, rpma_peer_new(ibv_ctx, &peer_));
    int ret = integration::ListenOnFreePort(peer_, &ep_, &port_);
    ASSERT_EQ(0, ret) << "rpma_ep_listen: " << rpma_err_2str(ret);
    // The region, between two guard pages.
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    ASSERT_EQ(kRegionSize % page_, 0u);
    void *mapping = mmap(nullptr, kRegionSize + 2 * page_, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, mapping);
    mapping_ = static_cast<uint8_t *>(mapping);
    region_ = mapping_ + page_;
    ASSERT_EQ(0, mprotect(region_, kRegionSize, PROT_READ | PROT_WRITE));
    memset(region_, kFill, kRegionSize);
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
    if (mapping_ != nullptr) munmap(mapping_, kRegionSize + 2 * page_);
    EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
  }

  // A valid HELLO; the server accepts with its region's descriptor as private data, which
  // the peer reads from the ACCEPT. Both sides established.
  void Handshake(Target *target) {
    std::vector<uint8_t> hello = {0};  // no private data
    if (shm_) {
      auto shm = std::make_unique<raw_peer::ShmPeer>();
      ASSERT_NO_FATAL_FAILURE(shm->Connect(port_));
      std::vector<uint8_t> offer = shm->Offer();
      hello.insert(hello.end(), offer.begin(), offer.end());
      shm_wire_ = shm.get();
      wire_ = std::move(shm);
    } else {
      auto tcp = std::make_unique<raw_peer::RawPeer>();
      ASSERT_NO_FATAL_FAILURE(tcp->Connect(port_));
      hello.push_back(0);  // no shared-memory offer
      wire_ = std::move(tcp);
    }
    raw_peer::PutLe(&hello, 0x686f7374696c65, 8);  // the peer's node id
    ASSERT_NO_FATAL_FAILURE(wire_->Send(Frame(raw_peer::kHello, hello)));

    int ep_fd = -1;
    ASSERT_EQ(0, rpma_ep_get_fd(ep_, &ep_fd));
    ASSERT_TRUE(integration::WaitReadable(ep_fd, kSafetyTimeoutMs));
    rpma_conn_req *req = nullptr;
    ASSERT_EQ(0, rpma_ep_next_conn_req(ep_, nullptr, &req));
    std::vector<uint8_t> desc;
    ASSERT_EQ(0, integration::GetDescriptor(mr_, &desc));
    ASSERT_EQ(21u, desc.size());
    rpma_conn_private_data pdata = {desc.data(), static_cast<uint8_t>(desc.size())};
    ASSERT_EQ(0, rpma_conn_req_connect(&req, &pdata, &conn_));

    uint16_t type = 0;
    std::vector<uint8_t> body;
    ASSERT_NO_FATAL_FAILURE(wire_->ReadFrame(&type, &body));
    ASSERT_EQ(raw_peer::kAccept, type);
    ASSERT_EQ(1 + 21 + 1 + 8u, body.size());
    ASSERT_EQ(21, body[0]);
    auto le = [&](size_t at, int bytes) {
      uint64_t value = 0;
      for (int i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(body[at + i]) << (8 * i);
      return value;
    };
    target->address = le(1, 8);
    target->length = le(9, 8);
    target->rkey = static_cast<uint32_t>(le(17, 4));
    ASSERT_EQ(reinterpret_cast<uint64_t>(region_), target->address);
    ASSERT_EQ(kRegionSize, target->length);
    ASSERT_EQ(shm_ ? 1 : 0, body[22]) << "the shared-memory offer, taken or not";
    if (shm_) shm_wire_->UseRings();

    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(conn_, kSafetyTimeoutMs, &event));
    ASSERT_EQ(RPMA_CONN_ESTABLISHED, event);
  }

  // The region holds `landed` at its start and the fill everywhere else.
  void ExpectRegion(const std::vector<uint8_t> &landed) {
    for (size_t i = 0; i < kRegionSize; ++i) {
      uint8_t expected = i < landed.size() ? landed[i] : kFill;
      ASSERT_EQ(expected, region_[i]) << "byte " << i << " of the region";
    }
  }

  rpma_peer *peer_ = nullptr;
  rpma_ep *ep_ = nullptr;
  std::string port_;
  size_t page_ = 0;
  uint8_t *mapping_ = nullptr;
  uint8_t *region_ = nullptr;
  rpma_mr_local *mr_ = nullptr;
  rpma_conn *conn_ = nullptr;
  bool shm_ = false;
  std::unique_ptr<raw_peer::PeerWire> wire_;
  raw_peer::ShmPeer *shm_wire_ = nullptr;  // wire_, over shared memory
};

TEST_P(HostilePeerTest, TheConnectionEndsNothingOutsideTheRegionIsTouchedOthersAreServed) {
  const Lie &lie = std::get<0>(GetParam());
  Target target;
  ASSERT_NO_FATAL_FAILURE(Handshake(&target));
  if (lie.scribble) lie.scribble(*shm_wire_);
  ASSERT_NO_FATAL_FAILURE(wire_->Send(lie.bytes(target)));
  for (size_t i = 0; i < lie.answers.size(); ++i) {
    SCOPED_TRACE("answer " + std::to_string(i));
    uint16_t type = 0;
    std::vector<uint8_t> body;
    ASSERT_NO_FATAL_FAILURE(wire_->ReadFrame(&type, &body));
    ASSERT_EQ(raw_peer::kResponse, type);
    ASSERT_GE(body.size(), 16u);
    uint32_t status = body[8] | body[9] << 8 | body[10] << 16 |
                      static_cast<uint32_t>(body[11]) << 24;
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

INSTANTIATE_TEST_SUITE_P(
    Lies, HostilePeerTest,
    ::testing::Combine(::testing::ValuesIn(AllLies()),
                       ::testing::Values(Transport::kTcp, Transport::kShm)),
    [](const ::testing::TestParamInfo<std::tuple<Lie, Transport>> &info) {
      return std::string(std::get<0>(info.param).name) +
             (std::get<1>(info.param) == Transport::kShm ? "_over_shm" : "_over_tcp");
    });

}  // namespace

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// Over shared memory the peer may also write the segment while the server works on it:
// another process (so that the sanitizers see the server's side only) scribbles random
// bytes at random places of the whole segment (header, ring counters and flags, the direct
// areas, both rings' bytes), seeded, while the peer writes valid requests into its ring.
// Whatever the server then reads, it may end the connection or execute what it finds, but
// it must not crash, hang, or touch a byte outside the region (the guard pages), and it goes
// on serving others.
class ScribblingPeerTest : public HostilePeerTest {
 protected:
  // One connection: the scribbler (seeded with `seed`) writes random bytes in
  // [from, segment's end) while the peer writes valid requests; then the peer hangs up.
  void ScribbleRound(uint64_t seed, bool rings_only) {
    Target target;
    ASSERT_NO_FATAL_FAILURE(Handshake(&target));
    uint8_t *segment =
        static_cast<uint8_t *>(const_cast<void *>(shm_wire_->segment().mapping()));
    size_t capacity = shm_wire_->ring_capacity();
    size_t size = rpma_sim::ShmSegment::SizeFor(capacity);
    size_t from = rings_only ? size - 2 * capacity : 0;
    // The scribbler goes on until the peer stops writing (a flag in memory both processes
    // share), a yield after every 64 bytes so that the server gets to read between them.
    void *flag_page =
        mmap(nullptr, page_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(MAP_FAILED, flag_page);
    auto *stop = static_cast<std::atomic<int> *>(flag_page);
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
    rpma_sim::ShmRing &ring = shm_wire_->segment().outbound();
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
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("seed %" PRIu64 "%s: the peer wrote %d requests before the ring took no more\n",
           seed, rings_only ? " (the rings' bytes)" : " (the whole segment)", sent);
    wire_->Close();
    // The server ended the connection or the peer hung up: lost either way, in time.
    rpma_conn_event event = RPMA_CONN_UNDEFINED;
    ASSERT_EQ(0, integration::NextEvent(conn_, kSafetyTimeoutMs, &event));
    EXPECT_EQ(RPMA_CONN_LOST, event);
    EXPECT_EQ(0, rpma_conn_delete(&conn_));
  }
};

// Over shared memory the peer may also write the segment while the server works on it:
// another process (so that the sanitizers see the server's side only) scribbles random
// bytes at random places, seeded, while the peer writes valid requests into its ring: over
// the whole segment (header, ring counters and flags, the direct areas, both rings' bytes),
// or over the rings' bytes alone (frames torn and altered as they pass). Whatever the server
// then reads, it may end the connection or execute what it finds, but it must not crash,
// hang, or touch a byte outside the region (the guard pages), and it goes on serving others.
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
    ::testing::Combine(::testing::Values(Lie{"concurrently", nullptr, {}, nullptr, {}, true, false,
                                             [](raw_peer::ShmPeer &) {}}),
                       ::testing::Values(Transport::kShm)),
    [](const ::testing::TestParamInfo<std::tuple<Lie, Transport>> &info) {
      return std::string(std::get<0>(info.param).name);
    });
