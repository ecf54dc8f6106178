// hostile_lies.cc -- the lies of hostile_peer_test (hostile_lies.h).
#include "tests/integration/hostile_lies.h"

#include "sim/transport/direct_area.h"
#include "sim/transport/shm_ring.h"

using raw_peer::Frame;
using raw_peer::Request;
using raw_peer::RequestBody;

namespace hostile {
namespace {

constexpr uint64_t kTop = ~uint64_t{0};

enum Opcode : uint8_t { kWrite = 0, kRead = 1, kAtomicWrite = 2, kFlush = 3, kSend = 4 };
constexpr uint8_t kInPlace = 4;  // REQUEST flags bit 2: bytes in place, their state after them

std::vector<uint8_t> Concat(std::vector<uint8_t> a, const std::vector<uint8_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// `count` reads of `length` bytes at the region's start, in sequence.
std::vector<uint8_t> Reads(const Target& t, uint64_t count, uint64_t length) {
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

}  // namespace

Request WriteOf(const Target& t, uint64_t sequence, uint64_t offset, uint8_t byte) {
  Request r;
  r.sequence = sequence;
  r.opcode = kWrite;
  r.rkey = t.rkey;
  r.address = t.address + offset;
  r.length = 8;
  r.bytes.assign(8, byte);
  return r;
}

namespace {

// `r` with its bytes sent in place, followed by `state` (0 intact, 1 lost).
Request InPlace(Request r, uint8_t state) {
  r.flags |= kInPlace;
  r.bytes.push_back(state);
  return r;
}

}  // namespace

std::vector<uint8_t> RequestFrame(const Request& r) {
  return Frame(raw_peer::kRequest, RequestBody(r));
}

std::vector<Lie> AllLies() {
  const ibv_wc_status kAccess = IBV_WC_REM_ACCESS_ERR;
  std::vector<Lie> all;
  // Requests the protocol allows and the region refuses.
  all.push_back({"write_with_a_forged_rkey",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.rkey ^= 0x5a5a;
                   return RequestFrame(r);
                 },
                 {kAccess},
                 nullptr,
                 {}});
  all.push_back({"write_one_byte_past_the_end",
                 [](const Target& t) { return RequestFrame(WriteOf(t, 0, kRegionSize - 7, 'x')); },
                 {kAccess},
                 nullptr,
                 {}});
  all.push_back({"write_one_byte_before_the_start",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.address = t.address - 1;
                   return RequestFrame(r);
                 },
                 {kAccess},
                 nullptr,
                 {}});
  all.push_back({"read_one_byte_past_the_end",
                 [](const Target& t) {
                   Request r;
                   r.opcode = kRead;
                   r.rkey = t.rkey;
                   r.address = t.address + 1;
                   r.length = kRegionSize;
                   return RequestFrame(r);
                 },
                 {kAccess},
                 nullptr,
                 {}});
  all.push_back({"read_wrapping_the_address_space",
                 [](const Target& t) {
                   Request r;
                   r.opcode = kRead;
                   r.rkey = t.rkey;
                   r.address = kTop - 7;
                   r.length = 16;  // ends, wrapped, at address 8
                   return RequestFrame(r);
                 },
                 {kAccess},
                 nullptr,
                 {}});
  all.push_back({"atomic_write_at_the_top_of_the_address_space",
                 [](const Target& t) {
                   Request r;
                   r.opcode = kAtomicWrite;
                   r.rkey = t.rkey;
                   r.address = kTop - 7;
                   r.length = 8;
                   return RequestFrame(r);
                 },
                 {kAccess},
                 nullptr,
                 {}});
  all.push_back({"flush_starting_past_the_end",
                 [](const Target& t) {
                   Request r;
                   r.opcode = kFlush;
                   r.flush_type = 1;
                   r.rkey = t.rkey;
                   r.address = t.address + kRegionSize;
                   r.length = kTop;
                   return RequestFrame(r);
                 },
                 {kAccess},
                 nullptr,
                 {}});
  // The queue pair is in error after the first: nobody answers the second, and the
  // requester's retries run out, which the simulator tells it at once.
  all.push_back({"a_request_after_an_access_error_goes_unanswered",
                 [](const Target& t) {
                   Request forged = WriteOf(t, 0, 0, 'x');
                   forged.rkey ^= 1;
                   return Concat(RequestFrame(forged), RequestFrame(WriteOf(t, 1, 0, 'y')));
                 },
                 {kAccess, IBV_WC_RETRY_EXC_ERR},
                 nullptr,
                 {}});
  // A valid write first: it lands, and the lie after it changes nothing more.
  all.push_back({"a_valid_write_then_a_forged_one",
                 [](const Target& t) {
                   Request forged = WriteOf(t, 1, 8, 'z');
                   forged.rkey ^= 1;
                   return Concat(RequestFrame(WriteOf(t, 0, 0, 'v')), RequestFrame(forged));
                 },
                 {IBV_WC_SUCCESS, kAccess},
                 nullptr,
                 std::vector<uint8_t>(8, 'v')});

  // Bytes sent in place (PROTOCOL.md): intact, they land; lost, nothing lands and the
  // requester hears that its buffer went away.
  all.push_back({"a_write_in_place_intact",
                 [](const Target& t) { return RequestFrame(InPlace(WriteOf(t, 0, 0, 'v'), 0)); },
                 {IBV_WC_SUCCESS},
                 nullptr,
                 std::vector<uint8_t>(8, 'v')});
  all.push_back({"a_write_in_place_lost",
                 [](const Target& t) { return RequestFrame(InPlace(WriteOf(t, 0, 0, 0), 1)); },
                 {IBV_WC_LOC_PROT_ERR},
                 nullptr,
                 {}});

  // Frames the protocol does not allow: the connection ends.
  all.push_back({"write_whose_length_field_overflows",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.length = kTop - 7;
                   return RequestFrame(r);
                 },
                 {},
                 "request length does not match its bytes",
                 {}});
  all.push_back({"write_longer_than_its_bytes",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.length = 16;
                   return RequestFrame(r);
                 },
                 {},
                 "request length does not match its bytes",
                 {}});
  all.push_back({"read_longer_than_any_frame",
                 [](const Target& t) {
                   Request r;
                   r.opcode = kRead;
                   r.rkey = t.rkey;
                   r.address = t.address;
                   r.length = kTop;
                   return RequestFrame(r);
                 },
                 {},
                 "read too large",
                 {}});
  all.push_back({"a_request_repeating_its_sequence",
                 [](const Target& t) {
                   return Concat(RequestFrame(WriteOf(t, 5, 0, 'a')),
                                 RequestFrame(WriteOf(t, 5, 8, 'b')));
                 },
                 {IBV_WC_SUCCESS},
                 "a request out of sequence",
                 std::vector<uint8_t>(8, 'a')});
  all.push_back({"a_request_going_back_in_sequence",
                 [](const Target& t) {
                   return Concat(RequestFrame(WriteOf(t, 7, 0, 'a')),
                                 RequestFrame(WriteOf(t, 3, 8, 'b')));
                 },
                 {IBV_WC_SUCCESS},
                 "a request out of sequence",
                 std::vector<uint8_t>(8, 'a')});
  // No receive is posted: a real send queue holds at most max_qp_wr (32768) of them.
  all.push_back({"more_sends_than_any_send_queue_holds",
                 [](const Target&) {
                   std::vector<uint8_t> bytes;
                   for (uint64_t sequence = 0; sequence <= 32768; ++sequence) {
                     Request send;
                     send.sequence = sequence;
                     send.opcode = kSend;
                     std::vector<uint8_t> frame = RequestFrame(send);
                     bytes.insert(bytes.end(), frame.begin(), frame.end());
                   }
                   return bytes;
                 },
                 {},
                 "more requests waiting for a receive than any send queue holds",
                 {}});
  // No receive is posted either: a requester keeps at most a window (64 MiB) of bytes
  // unanswered at its responder; 1-MiB sends pass it at the 64th (each frame holds a header
  // too).
  all.push_back({"sends_past_the_window",
                 [](const Target&) {
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
                 },
                 {},
                 "more bytes under way than the window (64 MiB) allows",
                 {}});
  // A read's answer counts against the window too: one alone may be as large as a frame,
  // but not behind a send that waits for a receive.
  all.push_back({"a_read_past_the_window_behind_a_waiting_send",
                 [](const Target& t) {
                   Request send;
                   send.opcode = kSend;
                   Request read;
                   read.sequence = 1;
                   read.opcode = kRead;
                   read.rkey = t.rkey;
                   read.address = t.address;
                   read.length = 64 << 20;
                   return Concat(RequestFrame(send), RequestFrame(read));
                 },
                 {},
                 "more bytes under way than the window (64 MiB) allows",
                 {}});
  // Reads it never reads the answers of. Answers waiting for the peer count against its
  // window (64 MiB: 16,320 answers of 4 KiB), behind the kernel's socket buffers (the
  // server's send buffer, 4 MiB at most by default, and the peer's receive buffer, kept
  // small): 20,000 reads pass it.
  all.push_back({"reads_whose_answers_it_never_reads",
                 [](const Target& t) { return Reads(t, 20000, kRegionSize); },
                 {},
                 "a peer that does not read its answers",
                 {},
                 false});
  // Small answers hardly fill a window: past two send queues' worth of answers waiting (the
  // peer's and this side's own requests) the process stops queueing for it. The kernel's
  // buffers take 4 MiB of 33-byte answers first. (One byte each: answers without bytes fold
  // into one frame for up to 64 requests, PROTOCOL.md, and would take 64 times as many.)
  all.push_back({"one_byte_reads_whose_answers_it_never_reads",
                 [](const Target& t) { return Reads(t, 2 * 32768 + (4 << 20) / 33 + 4096, 1); },
                 {},
                 "a peer that does not read its answers",
                 {},
                 false});
  all.push_back({"a_response_to_no_request",
                 [](const Target&) {
                   std::vector<uint8_t> body(16, 0);
                   return Frame(raw_peer::kResponse, body);
                 },
                 {},
                 "a response to no request under way",
                 {}});
  all.push_back({"a_response_with_read_bytes_to_no_request",
                 [](const Target&) {
                   std::vector<uint8_t> body(16 + kRegionSize, 0);
                   return Frame(raw_peer::kResponse, body);
                 },
                 {},
                 "a response to no request under way",
                 {}});
  all.push_back({"a_request_by_address_over_tcp",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.flags = 1;
                   r.bytes.clear();
                   raw_peer::PutLe(&r.bytes, 0x1000, 8);
                   return RequestFrame(r);
                 },
                 {},
                 "a request by address this side cannot follow",
                 {},
                 true,
                 true});
  all.push_back({"a_remote_error_no_fault_rule_gives",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.flags = 2;
                   std::vector<uint8_t> status;
                   raw_peer::PutLe(&status, IBV_WC_REM_ACCESS_ERR, 4);
                   r.bytes.insert(r.bytes.begin(), status.begin(), status.end());
                   return RequestFrame(r);
                 },
                 {},
                 "a remote error no fault rule gives",
                 {}});
  all.push_back({"bytes_in_place_neither_intact_nor_lost",
                 [](const Target& t) { return RequestFrame(InPlace(WriteOf(t, 0, 0, 'x'), 2)); },
                 {},
                 "bytes in place neither intact nor lost",
                 {}});
  all.push_back({"a_read_in_place",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.opcode = kRead;
                   r.bytes.clear();
                   return RequestFrame(InPlace(r, 0));
                 },
                 {},
                 "bytes in place where a request carries none",
                 {}});
  all.push_back({"bytes_in_place_whose_length_field_overflows",
                 [](const Target& t) {
                   Request r = InPlace(WriteOf(t, 0, 0, 'x'), 0);
                   r.bytes.clear();  // no bytes, no state: the length plus one wraps to 0
                   r.length = kTop;
                   return RequestFrame(r);
                 },
                 {},
                 "request length does not match its bytes",
                 {}});
  all.push_back({"bytes_in_place_without_their_state",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.flags = kInPlace;
                   return RequestFrame(r);
                 },
                 {},
                 "request length does not match its bytes",
                 {}});
  all.push_back({"an_unknown_opcode",
                 [](const Target& t) {
                   Request r = WriteOf(t, 0, 0, 'x');
                   r.opcode = 9;
                   return RequestFrame(r);
                 },
                 {},
                 "unknown request kind",
                 {}});
  all.push_back({"a_doorbell_in_the_data_stream",
                 [](const Target&) { return Frame(raw_peer::kDoorbell, {}); },
                 {},
                 "a doorbell",
                 {}});
  all.push_back({"placed_without_direct_access",
                 [](const Target&) { return Frame(raw_peer::kPlaced, {}); },
                 {},
                 "a PLACED frame where no direct access is",
                 {},
                 true,
                 true});
  all.push_back({"a_second_hello",
                 [](const Target&) {
                   std::vector<uint8_t> body = {0, 0};
                   raw_peer::PutLe(&body, 77, 8);
                   return Frame(raw_peer::kHello, body);
                 },
                 {},
                 "a second HELLO",
                 {}});
  // A valid write right behind the bad frame, in the same write of the peer. Nothing
  // after the frame that broke the rules is acted on (PROTOCOL.md).
  all.push_back({"a_second_hello_then_a_write",
                 [](const Target& t) {
                   std::vector<uint8_t> body = {0, 0};
                   raw_peer::PutLe(&body, 77, 8);
                   return Concat(Frame(raw_peer::kHello, body),
                                 RequestFrame(WriteOf(t, 0, 0, 'v')));
                 },
                 {},
                 "a second HELLO",
                 {}});
  all.push_back({"an_accept_from_the_client",
                 [](const Target&) {
                   std::vector<uint8_t> body = {0, 0};
                   raw_peer::PutLe(&body, 77, 8);
                   return Frame(raw_peer::kAccept, body);
                 },
                 {},
                 "a connection message for the other side",
                 {}});
  all.push_back({"a_reject_from_the_client",
                 [](const Target&) { return Frame(raw_peer::kReject, {}); },
                 {},
                 "a connection message for the other side",
                 {}});
  all.push_back({"a_frame_of_another_protocol_version",
                 [](const Target& t) {
                   std::vector<uint8_t> frame = RequestFrame(WriteOf(t, 0, 0, 'x'));
                   frame[4] = 6;
                   return frame;
                 },
                 {},
                 "protocol version 6",
                 {}});

  // Torn frames: the peer stops in the middle and hangs up; nothing executes.
  all.push_back({"a_request_torn_in_its_bytes",
                 [](const Target& t) {
                   std::vector<uint8_t> frame = RequestFrame(WriteOf(t, 0, 0, 'x'));
                   frame.resize(frame.size() - 3);
                   return frame;
                 },
                 {},
                 nullptr,
                 {}});
  all.push_back({"a_header_torn_in_two",
                 [](const Target& t) {
                   std::vector<uint8_t> frame = RequestFrame(WriteOf(t, 0, 0, 'x'));
                   frame.resize(7);
                   return frame;
                 },
                 {},
                 nullptr,
                 {}});
  // Over shared memory, the peer scribbles on the segment it shares with the server.
  auto nothing = [](const Target&) { return std::vector<uint8_t>(); };
  auto valid_write = [](const Target& t) { return RequestFrame(WriteOf(t, 0, 0, 'v')); };
  const std::vector<uint8_t> v(8, 'v');
  all.push_back({"ring_head_ahead_of_its_tail_by_more_than_the_ring",
                 nothing,
                 {},
                 "ring from",
                 {},
                 true,
                 false,
                 [](raw_peer::ShmPeer& peer) {
                   rpma_sim::RingControl* ring = peer.segment().outbound().control();
                   ring->head.store(ring->tail.load() + peer.ring_capacity() + 1);
                   peer.Ring();
                 }});
  all.push_back({"ring_head_behind_its_tail",
                 nothing,
                 {},
                 "ring from",
                 {},
                 true,
                 false,
                 [](raw_peer::ShmPeer& peer) {
                   rpma_sim::RingControl* ring = peer.segment().outbound().control();
                   ring->tail.store(ring->head.load() + 1);
                   peer.Ring();
                 }});
  // The server's ring to the peer: its consumer's counter is the peer's to write.
  all.push_back({"the_answers_ring_tail_ahead_of_its_head",
                 valid_write,
                 {},
                 "ring to",
                 v,
                 true,
                 false,
                 [](raw_peer::ShmPeer& peer) {
                   rpma_sim::RingControl* ring = peer.segment().inbound().control();
                   ring->tail.store(ring->head.load() + 5);
                 }});
  // Read once when the server opened the segment, never again: scribbled, they change
  // nothing, and the connection goes on.
  all.push_back({"the_header_scribbled",
                 valid_write,
                 {IBV_WC_SUCCESS},
                 nullptr,
                 v,
                 true,
                 false,
                 [](raw_peer::ShmPeer& peer) {
                   memset(const_cast<void*>(peer.segment().mapping()), 0xFF, 48);
                 }});
  // The records of what the peer placed directly: the server checks each against its own
  // regions, and counters further apart than the records close direct access.
  all.push_back({"placement_records_scribbled",
                 valid_write,
                 {IBV_WC_SUCCESS},
                 nullptr,
                 v,
                 true,
                 false,
                 [](raw_peer::ShmPeer& peer) {
                   rpma_sim::DirectArea& area = peer.segment().peer_direct();
                   memset(static_cast<void*>(area.placements), 0xA5, sizeof(area.placements));
                   area.placements_written.store(~uint64_t{0} / 3);
                 }});
  // The peer truncates the segment both sides map: the server's next access to the rings
  // would raise SIGBUS; the guard (mapping_guard.h) ends the connection instead.
  all.push_back({"the_segment_truncated",
                 nothing,
                 {},
                 "truncated the shared memory segment",
                 {},
                 false,
                 false,
                 [](raw_peer::ShmPeer& peer) {
                   peer.Truncate();
                   peer.Ring();
                 }});
  return all;
}

}  // namespace hostile
