// make_corpus.cc -- writes the seed corpus of every fuzz target (tests/fuzz/corpus/<target>/) from
// the simulator's own encoders, so the seeds follow the protocol as it changes: frames as a
// WireLink sends them (captured from its wire), HELLO and ACCEPT bodies, a segment as
// ShmSegment::InitHeader and its rings make it, fault rules the parser accepts, and descriptors
// from the public API. Each target also gets a few edge cases, named edge_*.
//
//   bazel run //tests/fuzz:make_corpus -- "$PWD/tests/fuzz/corpus"
//
// The output is the same on every run (corpus_up_to_date_test compares it with the committed
// corpus): nothing depends on addresses, the clock or randomness.
#include <errno.h>
#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/cm/connect_messages.h"
#include "sim/fault/fault_rule.h"
#include "sim/transport/byte_stream.h"
#include "sim/transport/frame.h"
#include "sim/transport/frame_wire.h"
#include "sim/transport/shm_ring.h"
#include "sim/transport/shm_segment.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/wire_link.h"

namespace rpma_sim {
namespace {

using Bytes = std::vector<uint8_t>;

void Die(const std::string& what) {
  fprintf(stderr, "make_corpus: %s\n", what.c_str());
  exit(1);
}

class CorpusWriter {
 public:
  explicit CorpusWriter(std::string root) : root_(std::move(root)) {}

  void Target(const std::string& target) {
    dir_ = root_ + "/" + target;
    if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) Die("cannot create " + dir_);
  }

  void Write(const std::string& name, const Bytes& bytes) {
    std::string path = dir_ + "/" + name;
    FILE* file = fopen(path.c_str(), "wb");
    // No fwrite for an empty input: its data() may be null, which fwrite must not get.
    if (file == nullptr ||
        (!bytes.empty() && fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size()) ||
        fclose(file) != 0)
      Die("cannot write " + path);
  }

  void Write(const std::string& name, const std::string& text) {
    Write(name, Bytes(text.begin(), text.end()));
  }

 private:
  std::string root_;
  std::string dir_;
};

// A stream that keeps what a wire writes to it: the frames exactly as a peer receives them.
class CapturedStream : public ByteStream {
 public:
  explicit CapturedStream(Bytes* out) : out_(out) {}
  ssize_t Write(const iovec* parts, int count) override {
    ssize_t total = 0;
    for (int i = 0; i < count; ++i) {
      const auto* bytes = static_cast<const uint8_t*>(parts[i].iov_base);
      out_->insert(out_->end(), bytes, bytes + parts[i].iov_len);
      total += static_cast<ssize_t>(parts[i].iov_len);
    }
    return total;
  }
  ssize_t TryRead(uint8_t*, size_t) override { return -1; }
  void AsyncWaitReadable(std::function<void()>) override {}
  void AsyncWaitWritable(std::function<void()>) override {}
  void Shutdown() override {}
  const std::string& peer() const override { return peer_; }

 private:
  Bytes* out_;
  std::string peer_ = "corpus";
};

// Frames a WireLink sends, captured.
class CapturedLink {
 public:
  CapturedLink()
      : link_(std::make_shared<WireLink>(
            std::make_shared<FrameWire>(std::make_unique<CapturedStream>(&bytes_)))) {}

  Bytes Request(SendRequest request, uint64_t sequence) {
    bytes_.clear();
    link_->SubmitLocked(request, sequence);
    return bytes_;
  }

  Bytes Response(uint64_t sequence, ibv_wc_status status, const Bytes& read_data) {
    bytes_.clear();
    Outcome outcome;
    outcome.status = status;
    link_->RespondLocked(sequence, outcome, read_data.empty() ? nullptr : read_data.data(),
                         read_data.size());
    return bytes_;
  }

  // `count` successes without bytes given in one batch, as a turn gives them: one RESPONSE.
  Bytes Successes(uint64_t first, uint32_t count) {
    bytes_.clear();
    {
      SendBatch batch;
      for (uint32_t i = 0; i < count; ++i) link_->RespondLocked(first + i, Outcome{}, nullptr, 0);
    }
    return bytes_;
  }

  Bytes Frame(FrameType type, Bytes body) {
    bytes_.clear();
    link_->SendFrame(type, std::move(body));
    return bytes_;
  }

 private:
  Bytes bytes_;
  std::shared_ptr<WireLink> link_;
};

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes all;
  for (const Bytes& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

void WriteFrames(CorpusWriter* out) {
  out->Target("frame");
  CapturedLink link;
  // The initiator's buffer, registered (a request's bytes are read only from a registered
  // region); its address never reaches the frame (the bytes do).
  static uint8_t buffer[32] = "rpma-sim corpus, 32 bytes long.";
  std::shared_ptr<MemoryRegion> local =
      MemoryRegionTable::Get().Register(nullptr, buffer, sizeof(buffer), 0);
  SendRequest write;
  write.opcode = SendOpcode::kWrite;
  write.local = local;
  write.length = 16;
  write.rkey = 0x1234;
  write.remote_addr = 0x10000;
  Bytes write_frame = link.Request(write, 1);
  out->Write("request_write", write_frame);
  SendRequest send = write;
  send.opcode = SendOpcode::kSend;
  send.with_imm = true;
  send.imm_data = 0x01020304;
  out->Write("request_send_with_imm", link.Request(send, 2));
  SendRequest read = write;
  read.opcode = SendOpcode::kRead;
  read.length = 32;
  out->Write("request_read", link.Request(read, 3));
  SendRequest atomic = write;
  atomic.opcode = SendOpcode::kAtomicWrite;
  atomic.length = 8;
  memcpy(atomic.inline_data, "atomic!", 8);
  out->Write("request_atomic_write", link.Request(atomic, 4));
  SendRequest flush = write;
  flush.opcode = SendOpcode::kFlush;
  flush.flush_kind = FlushKind::kPersistent;
  out->Write("request_flush", link.Request(flush, 5));
  SendRequest fails = write;
  fails.responder_fails = IBV_WC_REM_OP_ERR;
  out->Write("request_responder_fails", link.Request(fails, 6));
  // 16 KiB and more leave from the registered region itself, then their state byte: intact
  // while the region is registered, lost (zeros) once it is not.
  static uint8_t large[16 << 10];
  memset(large, 'L', sizeof(large));
  SendRequest in_place = write;
  in_place.local = MemoryRegionTable::Get().Register(nullptr, large, sizeof(large), 0);
  in_place.length = sizeof(large);
  Bytes in_place_frame = link.Request(in_place, 7);
  out->Write("request_write_in_place", in_place_frame);
  MemoryRegionTable::Get().Deregister(in_place.local);
  in_place.opcode = SendOpcode::kSend;
  out->Write("request_send_in_place_lost", link.Request(in_place, 8));
  Bytes read_data(buffer, buffer + 32);
  out->Write("response_read", link.Response(3, IBV_WC_SUCCESS, read_data));
  out->Write("response_error", link.Response(1, IBV_WC_REM_ACCESS_ERR, {}));
  out->Write("response_merged", link.Successes(4, 5));
  out->Write("stream", Concat({write_frame, link.Response(1, IBV_WC_SUCCESS, {}),
                               link.Frame(FrameType::kDoorbell, {}),
                               link.Frame(FrameType::kDisconnect, {})}));
  // Edge cases: each one thing wrong with a valid frame.
  Bytes edge = write_frame;
  edge[0] ^= 0xff;  // magic
  out->Write("edge_bad_magic", edge);
  edge = write_frame;
  edge[4] = 3;  // version 3
  out->Write("edge_old_version", edge);
  edge = write_frame;
  edge[6] = static_cast<uint8_t>(FrameType::kPlaced) + 1;  // type
  out->Write("edge_unknown_type", edge);
  edge = write_frame;
  uint32_t too_large = kMaxFrameBody + 1;
  memcpy(&edge[8], &too_large, 4);  // little-endian hosts only, as the simulator
  out->Write("edge_body_too_large", edge);
  edge = write_frame;
  edge.pop_back();
  out->Write("edge_truncated_body", edge);
  edge = write_frame;
  edge[kFrameHeaderSize + 11] = 1;  // by reference, which TCP never allows
  out->Write("edge_by_reference", edge);
  edge = write_frame;
  edge[kFrameHeaderSize + 28] = 17;  // one byte more announced than carried
  out->Write("edge_length_mismatch", edge);
  // In place with only its fields and a length of 2^64 - 1: the length and the state byte
  // would add up to the nothing that follows, if they were added.
  edge.assign(in_place_frame.begin(), in_place_frame.begin() + kFrameHeaderSize + 44);
  uint32_t fields_only = 44;
  memcpy(&edge[8], &fields_only, 4);
  memset(&edge[kFrameHeaderSize + 28], 0xff, 8);
  out->Write("edge_in_place_length_wraps", edge);
  edge = link.Response(1, IBV_WC_SUCCESS, {});
  edge[kFrameHeaderSize + 8] = 0xff;  // an unknown status
  out->Write("edge_unknown_status", edge);
}

void WriteConnectMessages(CorpusWriter* out) {
  out->Target("connect_messages");
  const uint8_t kHello = 0, kAccept = 1;
  auto with_kind = [](uint8_t kind, Bytes body) {
    body.insert(body.begin(), kind);
    return body;
  };
  HelloMessage hello;
  hello.private_data = {'h', 'e', 'l', 'l', 'o'};
  hello.node = 7;
  out->Write("hello", with_kind(kHello, EncodeHello(hello)));
  hello.has_offer = true;
  hello.offer.name = "rpma-sim-1234-0-0badcafe";
  hello.offer.nonce = 0x0102030405060708;
  hello.offer.required = true;
  out->Write("hello_with_offer", with_kind(kHello, EncodeHello(hello)));
  HelloMessage full;
  full.private_data.assign(56, 'p');
  out->Write("hello_56_bytes", with_kind(kHello, EncodeHello(full)));
  AcceptMessage accept;
  accept.private_data = {'o', 'k'};
  accept.node = 9;
  out->Write("accept", with_kind(kAccept, EncodeAccept(accept)));
  accept.shared_memory = true;
  out->Write("accept_shm", with_kind(kAccept, EncodeAccept(accept)));
  AcceptMessage full_accept;
  full_accept.private_data.assign(196, 'a');
  out->Write("accept_196_bytes", with_kind(kAccept, EncodeAccept(full_accept)));
  // Edge cases.
  full.private_data.push_back('p');
  out->Write("edge_hello_57_bytes", with_kind(kHello, EncodeHello(full)));
  full_accept.private_data.push_back('a');
  out->Write("edge_accept_197_bytes", with_kind(kAccept, EncodeAccept(full_accept)));
  hello.offer.name.assign(65, 'n');
  out->Write("edge_hello_long_name", with_kind(kHello, EncodeHello(hello)));
  Bytes trailing = EncodeHello(hello);
  trailing.push_back(0);
  out->Write("edge_hello_trailing_byte", with_kind(kHello, trailing));
  Bytes shm_two = EncodeAccept(accept);
  shm_two[1 + accept.private_data.size()] = 2;
  out->Write("edge_accept_shm_2", with_kind(kAccept, shm_two));
  out->Write("edge_empty_accept", with_kind(kAccept, {}));
}

// shm_segment_fuzzer.cc's input: a size choice, the header, the client ring's first bytes.
constexpr uint64_t kOfferedNonce = 0x6e6f6e63652d3031;

class SegmentImage {
 public:
  SegmentImage(size_t capacity, uint8_t size_choice)
      : capacity_(capacity),
        size_choice_(size_choice),
        mapping_(static_cast<uint8_t*>(aligned_alloc(4096, ShmSegment::SizeFor(capacity))), &free) {
    memset(mapping_.get(), 0, ShmSegment::SizeFor(capacity));
    ShmSegment::InitHeader(mapping_.get(), capacity, kOfferedNonce);
  }
  ShmRing Ring(ShmSegment::Side from) {
    return ShmSegment::RingOf(mapping_.get(), capacity_, from);
  }
  // The control block of the client's ring: the header ends with the two rings' blocks
  // (shm_segment.cc); checked against what the ring wrote.
  RingControl* ClientControl() {
    auto* control = reinterpret_cast<RingControl*>(mapping_.get() + ShmSegment::HeaderSize() -
                                                   2 * sizeof(RingControl));
    if (control->head.load() != written_) Die("the segment header's layout changed");
    return control;
  }
  void Send(const Bytes& frames) {
    iovec part = {const_cast<uint8_t*>(frames.data()), frames.size()};
    if (Ring(ShmSegment::kClient).TryWrite(&part, 1) != static_cast<ssize_t>(frames.size()))
      Die("the ring did not take the frames");
    written_ += frames.size();
  }
  Bytes Input() const {
    Bytes input{size_choice_};
    const uint8_t* data = mapping_.get() + ShmSegment::SizeFor(capacity_) - 2 * capacity_;
    input.insert(input.end(), mapping_.get(), mapping_.get() + ShmSegment::HeaderSize());
    input.insert(input.end(), data, data + written_);
    return input;
  }

 private:
  size_t capacity_;
  uint8_t size_choice_;
  std::unique_ptr<uint8_t, decltype(&free)> mapping_;
  size_t written_ = 0;
};

void WriteSegments(CorpusWriter* out) {
  out->Target("shm_segment");
  CapturedLink link;
  Bytes frames =
      Concat({link.Response(1, IBV_WC_SUCCESS, {}), link.Frame(FrameType::kDisconnect, {})});
  const size_t kMin = ShmSegment::kMinRingCapacity;
  SegmentImage fresh(kMin, 0);
  out->Write("segment_fresh", fresh.Input());
  SegmentImage busy(kMin, 0);
  busy.Send(frames);
  out->Write("segment_with_frames", busy.Input());
  SegmentImage larger(2 * kMin, 1);
  larger.Send(frames);
  out->Write("segment_128k", larger.Input());
  SegmentImage closed(kMin, 0);
  closed.Send(frames);
  closed.Ring(ShmSegment::kClient).CloseAsProducer();
  closed.Ring(ShmSegment::kServer).CloseAsConsumer();
  out->Write("segment_closed", closed.Input());
  // Edge cases: counters a peer spoiled, a segment that is not the one offered.
  SegmentImage behind(kMin, 0);
  behind.Send(frames);
  behind.ClientControl()->tail.store(frames.size() + 1);
  out->Write("edge_head_behind_tail", behind.Input());
  SegmentImage ahead(kMin, 0);
  ahead.Send(frames);
  ahead.ClientControl()->head.store(kMin + 1);
  out->Write("edge_head_past_capacity", ahead.Input());
  SegmentImage wrapped(kMin, 0);
  wrapped.Send(frames);
  RingControl* wrapping = wrapped.ClientControl();
  wrapping->head.store(~uint64_t{0} - 3);
  wrapping->tail.store(~uint64_t{0} - 3 - frames.size());
  out->Write("edge_counters_wrapping", wrapped.Input());
  SegmentImage wrong_size(kMin, 0x80);
  out->Write("edge_size_mismatch", wrong_size.Input());
  SegmentImage other_capacity(2 * kMin, 0);
  out->Write("edge_capacity_mismatch", other_capacity.Input());
  Bytes wrong_nonce = fresh.Input();
  wrong_nonce[1 + 16] ^= 1;  // the nonce: after magic (8), version (4) and capacity (4)
  out->Write("edge_wrong_nonce", wrong_nonce);
}

void WriteFaultRules(CorpusWriter* out) {
  out->Target("fault_rule");
  // The documented examples and one of each kind and selector.
  const char* const kRules[][2] = {
      {"call", "call:fn=rpma_mr_reg,err=RPMA_E_NOMEM,nth=2"},
      {"call_any", "call:fn=*,err=RPMA_E_PROVIDER,p=0.5,times=3"},
      {"wc", "wc:op=write,status=IBV_WC_RETRY_EXC_ERR,p=0.01"},
      {"wc_remote", "wc:op=read|flush,status=IBV_WC_REM_ACCESS_ERR,side=client,conn=2"},
      {"wc_recv", "wc:op=recv,status=IBV_WC_LOC_LEN_ERR,side=server"},
      {"delay", "delay:op=send,us=100-5000,at_ms=20"},
      {"lose", "lose:op=write,after=1000,times=1"},
      {"plan", "reject:nth=1;unreachable:nth=2"},
      {"partition", "partition:ms=300,every=1000"},
      {"power_failure", "power_failure:op=write,after=100,side=server,loss=lines,exit=1"},
      {"power_failure_point", "power_failure:point=4,side=server,loss=words,keep=1:64"},
      {"power_failure_persist", "power_failure:point=2,at=persist,loss=all,exit=1"},
      {"plan_spaced", " lose:nth=3 ;\n;delay:us=5\t"},
  };
  for (const auto& rule : kRules) {
    std::vector<FaultRule> parsed;
    std::string error;
    if (!ParseFaultRules(rule[1], &parsed, &error)) Die("seed rule refused: " + error);
    out->Write(rule[0], std::string(rule[1]));
  }
  const char* const kEdges[][2] = {
      {"edge_unknown_kind", "crash:nth=1"},
      {"edge_twice", "lose:nth=1,nth=2"},
      {"edge_recv_not_alone", "wc:op=recv|write,status=IBV_WC_GENERAL_ERR"},
      {"edge_p_zero", "lose:p=0"},
      {"edge_empty_value", "delay:us="},
      {"edge_time_a_year", "delay:us=1-31536000000000"},
      {"edge_time_over_a_year", "partition:ms=31536000001"},
      {"edge_semicolons", ";;"},
      {"edge_cannot_return", "call:fn=rpma_mr_get_ptr,err=RPMA_E_NOMEM"},
  };
  for (const auto& edge : kEdges) out->Write(edge[0], std::string(edge[1]));
}

// Writes a descriptor of a region registered with `usage` (its address fixed: the registered
// buffer's differs from run to run).
Bytes MrDescriptor(struct rpma_peer* peer, int usage) {
  static uint8_t buffer[4096];
  struct rpma_mr_local* mr = nullptr;
  if (rpma_mr_reg(peer, buffer, sizeof(buffer), usage, &mr) != 0) Die("rpma_mr_reg failed");
  size_t size = 0;
  Bytes descriptor;
  if (rpma_mr_get_descriptor_size(mr, &size) != 0) Die("rpma_mr_get_descriptor_size failed");
  descriptor.resize(size);
  if (rpma_mr_get_descriptor(mr, descriptor.data()) != 0) Die("rpma_mr_get_descriptor failed");
  rpma_mr_dereg(&mr);
  for (int i = 0; i < 8; ++i) descriptor[i] = static_cast<uint8_t>(0x7f0000001000 >> (8 * i));
  return descriptor;
}

void WriteDescriptors(CorpusWriter* out) {
  out->Target("mr_descriptor");
  struct ibv_context* device = nullptr;
  struct rpma_peer* peer = nullptr;
  if (rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &device) != 0 ||
      rpma_peer_new(device, &peer) != 0)
    Die("no simulated device for 127.0.0.1");
  Bytes persistent = MrDescriptor(
      peer, RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
  out->Write("mr_persistent", persistent);
  out->Write("mr_visibility",
             MrDescriptor(peer, RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY));
  out->Write("mr_read_dst", MrDescriptor(peer, RPMA_MR_USAGE_READ_DST));
  rpma_peer_delete(&peer);
  Bytes edge(persistent.begin(), persistent.end() - 1);
  out->Write("edge_short", edge);
  edge = persistent;
  edge[20] = 0;
  out->Write("edge_no_usage", edge);
  edge = persistent;
  edge.push_back(0xee);
  out->Write("edge_longer", edge);
  edge = persistent;
  for (int i = 8; i < 16; ++i) edge[i] = 0xff;  // a region as long as can be
  out->Write("edge_huge_length", edge);

  out->Target("peer_cfg_descriptor");
  struct rpma_peer_cfg* cfg = nullptr;
  if (rpma_peer_cfg_new(&cfg) != 0) Die("rpma_peer_cfg_new failed");
  for (bool direct : {false, true}) {
    Bytes descriptor(1);
    rpma_peer_cfg_set_direct_write_to_pmem(cfg, direct);
    if (rpma_peer_cfg_get_descriptor(cfg, descriptor.data()) != 0)
      Die("rpma_peer_cfg_get_descriptor failed");
    out->Write(direct ? "direct_write" : "no_direct_write", descriptor);
  }
  rpma_peer_cfg_delete(&cfg);
  out->Write("edge_empty", Bytes{});
  out->Write("edge_nonzero_2", Bytes{2});
  out->Write("edge_two_bytes", Bytes{0, 1});
}

}  // namespace
}  // namespace rpma_sim

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR (tests/fuzz/corpus)\n", argv[0]);
    return 2;
  }
  if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) rpma_sim::Die("cannot create the corpus dir");
  rpma_sim::CorpusWriter out(argv[1]);
  rpma_sim::WriteFrames(&out);
  rpma_sim::WriteConnectMessages(&out);
  rpma_sim::WriteSegments(&out);
  rpma_sim::WriteFaultRules(&out);
  rpma_sim::WriteDescriptors(&out);
  return 0;
}
