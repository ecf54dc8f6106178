// soak_driver.cc -- the soak's operations: drawing them from the seed, posting them with the
// send- and receive-queue rules respected, applying them to the model in posting order, and
// checking every completion, every read and every received message.
#include "tests/soak/soak_driver.h"

#include <arpa/inet.h>
#include <string.h>

#include <chrono>

namespace soak {
namespace {

using Clock = std::chrono::steady_clock;

// The completion opcode of a successful operation of `kind` (librpma's portable flush is a
// read; the device's native capabilities are off).
ibv_wc_opcode SendOpcode(Kind kind) {
  switch (kind) {
    case kRead:
    case kFlushPersistent:
    case kFlushVisibility:
      return IBV_WC_RDMA_READ;
    case kSend:
    case kSendWithImm:
      return IBV_WC_SEND;
    default:
      return IBV_WC_RDMA_WRITE;
  }
}

bool IsMessage(Kind kind) { return kind == kSend || kind == kSendWithImm || kind == kWriteWithImm; }

}  // namespace

SoakDriver::SoakDriver(const SoakOptions& options)
    : options_(options), rng_(options.seed), sizes_rng_(options.seed * 0x9E3779B97F4A7C15ull + 1) {}

// A length: 5% empty, half small, some up to a KiB, some up to `max`.
static size_t DrawLength(std::mt19937_64& rng, size_t max) {
  uint64_t u = rng() % 100;
  size_t len = u < 5 ? 0 : u < 55 ? 1 + rng() % 64 : u < 85 ? 1 + rng() % 1024 : 1 + rng() % 4096;
  return std::min(len, max);
}

Op SoakDriver::Generate(uint64_t index) {
  static const struct {
    Kind kind;
    int weight;
  } kMix[] = {{kWrite, 24},          {kRead, 16}, {kAtomicWrite, 8},  {kFlushPersistent, 9},
              {kFlushVisibility, 5}, {kSend, 14}, {kSendWithImm, 10}, {kWriteWithImm, 14}};
  Op op;
  op.index = index;
  int draw = static_cast<int>(rng_() % 100);
  for (const auto& entry : kMix) {
    op.kind = entry.kind;
    if ((draw -= entry.weight) < 0) break;
  }
  op.signalled = rng_() % 2 == 0;
  op.region = rng_() % 4 == 0 ? 1 : 0;
  const size_t size = Target(op.region).size;
  switch (op.kind) {
    case kAtomicWrite:
      op.len = 8;
      op.offset = 8 * (rng_() % (size / 8));
      for (uint8_t& byte : op.atomic_value) byte = static_cast<uint8_t>(rng_());
      break;
    case kFlushPersistent:
    case kFlushVisibility:
      // The portable flush reads 8 bytes at the offset: they must lie in the region.
      op.len = std::max<size_t>(1, DrawLength(rng_, size));
      op.offset = rng_() % (size - std::max<size_t>(op.len, 8) + 1);
      break;
    case kSend:
    case kSendWithImm:
      op.len = DrawLength(rng_, SoakFabric::kRecvSlot);
      break;
    default:
      op.len = DrawLength(rng_, SoakFabric::kReadSlot);
      op.offset = rng_() % (size - op.len + 1);
      break;
  }
  op.src_offset = rng_() % (SoakFabric::kSourceSize - op.len + 1);
  op.imm = static_cast<uint32_t>(rng_());
  return op;
}

void SoakDriver::ApplyToModel(Op* op) {
  ShadowRegion& shadow = Shadow(op->region);
  switch (op->kind) {
    case kWrite:
    case kWriteWithImm:
      op->before = shadow.Place(op->offset, fabric_.source.bytes + op->src_offset, op->len);
      break;
    case kAtomicWrite:
      op->before = shadow.Place(op->offset, op->atomic_value, 8);
      break;
    case kRead:
    case kFlushPersistent:
      op->snapshot.assign(shadow.current() + op->offset, shadow.current() + op->offset + op->len);
      break;
    default:
      break;
  }
}

int SoakDriver::PostToFabric(Op* op) {
  rpma_conn* conn = fabric_.client();
  Region& target = Target(op->region);
  const int flags = op->signalled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR;
  const void* ctx = reinterpret_cast<const void*>(op->index);
  rpma_mr_local* src = fabric_.source.mr;
  switch (op->kind) {
    case kWrite:
      return rpma_write(conn, target.remote, op->offset, src, op->src_offset, op->len, flags, ctx);
    case kWriteWithImm:
      return rpma_write_with_imm(conn, target.remote, op->offset, src, op->src_offset, op->len,
                                 flags, op->imm, ctx);
    case kRead: {
      // A slot of its own while outstanding (at most 64 consecutive operations are), poisoned
      // so that a read that placed nothing cannot pass.
      op->read_slot = op->index % SoakFabric::kMaxReadSlots;
      uint8_t* slot = fabric_.read_dst.bytes + op->read_slot * SoakFabric::kReadSlot;
      memset(slot, static_cast<int>(0xA5 ^ op->index), SoakFabric::kReadSlot);
      return rpma_read(conn, fabric_.read_dst.mr, op->read_slot * SoakFabric::kReadSlot,
                       target.remote, op->offset, op->len, flags, ctx);
    }
    case kAtomicWrite:
      return rpma_atomic_write(conn, target.remote, op->offset,
                               reinterpret_cast<const char*>(op->atomic_value), flags, ctx);
    case kFlushPersistent:
    case kFlushVisibility:
      return rpma_flush(
          conn, target.remote, op->offset, op->len,
          op->kind == kFlushPersistent ? RPMA_FLUSH_TYPE_PERSISTENT : RPMA_FLUSH_TYPE_VISIBILITY,
          flags, ctx);
    case kSend:
    case kSendWithImm: {
      // An empty message is librpma's 0-byte send: no buffer at all.
      rpma_mr_local* from = op->len == 0 ? nullptr : src;
      size_t offset = op->len == 0 ? 0 : op->src_offset;
      return op->kind == kSend
                 ? rpma_send(conn, from, offset, op->len, flags, ctx)
                 : rpma_send_with_imm(conn, from, offset, op->len, flags, op->imm, ctx);
    }
    default:
      Fatal("no such operation kind %d", op->kind);
  }
}

bool SoakDriver::Post(Op* op) {
  current_index_ = op->index;
  if (outstanding_.size() >= sizes_.sq) {
    // A full send queue refuses the post (and nothing happens): every 7th time, try it.
    if (op->index % 7 == 0 && !failing_ && prediction_.effect == Prediction::kNone &&
        !IsMessage(op->kind)) {
      int ret = PostToFabric(op);
      if (ret != RPMA_E_PROVIDER)
        Fatal(
            "a post into a full send queue (%zu outstanding, sq %u) returned %d, not "
            "RPMA_E_PROVIDER",
            outstanding_.size(), sizes_.sq, ret);
      ++stats_.kinds[op->kind].queue_full;
    }
    if (!PumpUntil([&] { return outstanding_.size() < sizes_.sq; }, "a free send-queue slot", true))
      return false;
  }
  if (IsMessage(op->kind) && !EnsureReceive()) return false;
  // The last free slot of the send queue must go to a signalled request, or nothing would
  // ever free the others.
  if (unsignalled_run_ + 1 >= sizes_.sq) op->signalled = true;
  ApplyToModel(op);
  int ret = PostToFabric(op);
  if (ret != 0) {
    if (op->kind == kWrite || op->kind == kWriteWithImm || op->kind == kAtomicWrite)
      Shadow(op->region).Undo(op->offset, op->before);
    if (prediction_.effect == Prediction::kNone && !failing_)
      Fatal("posting %s returned %d (%s)", KindName(op->kind), ret, rpma_err_2str(ret));
    failing_ = true;  // the connection went away under a rule: recover, then post again
    return false;
  }
  ++stats_.kinds[op->kind].posted;
  unsignalled_run_ = op->signalled ? 0 : unsignalled_run_ + 1;
  NotePosted(*op);
  if (IsMessage(op->kind)) {
    Message message;
    message.op_index = op->index;
    message.kind = op->kind;
    message.len = op->len;
    message.imm = op->imm;
    if (op->kind != kWriteWithImm)
      message.bytes.assign(fabric_.source.bytes + op->src_offset,
                           fabric_.source.bytes + op->src_offset + op->len);
    messages_.push_back(std::move(message));
  }
  outstanding_.push_back(std::move(*op));
  return true;
}

void SoakDriver::PostReceive() {
  size_t slot = free_slots_.back();
  free_slots_.pop_back();
  uint64_t wr_id = next_recv_id_++;
  Check(rpma_recv(fabric_.server(), fabric_.recv.mr, slot * SoakFabric::kRecvSlot,
                  SoakFabric::kRecvSlot, reinterpret_cast<const void*>(wr_id)),
        "rpma_recv");
  receives_[wr_id] = slot;
  ++stats_.kinds[kRecv].posted;
}

bool SoakDriver::EnsureReceive() {
  // Receives are posted before the message that needs one (a message with none waits for
  // ever: RNR retries), at most the receive queue's depth of them.
  return PumpUntil(
      [&] {
        while (receives_.size() < sizes_.rq) PostReceive();
        return messages_.size() < receives_.size();
      },
      "a receive to complete", true);
}

bool SoakDriver::PumpUntil(const std::function<bool()>& done, const char* what,
                           bool bail_on_failure) {
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(kSafetyTimeoutMs);
  while (!done()) {
    if (bail_on_failure && failing_) return false;
    bool any = PollClient();
    any = PollServer() || any;
    if (!any && Clock::now() > deadline)
      Fatal("waited %d ms for %s (%zu outstanding, %zu messages on their way, %zu receives)",
            kSafetyTimeoutMs, what, outstanding_.size(), messages_.size(), receives_.size());
  }
  return !(bail_on_failure && failing_);
}

bool SoakDriver::PollClient() {
  if (fabric_.client_cq() == nullptr) return false;
  ibv_wc wcs[8];
  int got = 0;
  int ret = rpma_cq_get_wc(fabric_.client_cq(), 8, wcs, &got);
  if (ret == RPMA_E_NO_COMPLETION) return false;
  Check(ret, "rpma_cq_get_wc (client)");
  for (int i = 0; i < got; ++i) OnClientCompletion(wcs[i]);
  return got > 0;
}

bool SoakDriver::PollServer() {
  if (fabric_.server_cq() == nullptr) return false;
  ibv_wc wcs[8];
  int got = 0;
  int ret = rpma_cq_get_wc(fabric_.server_cq(), 8, wcs, &got);
  if (ret == RPMA_E_NO_COMPLETION) return false;
  Check(ret, "rpma_cq_get_wc (server)");
  for (int i = 0; i < got; ++i) OnServerCompletion(wcs[i]);
  return got > 0;
}

void SoakDriver::OnClientCompletion(const ibv_wc& wc) {
  if (wc.qp_num != fabric_.client_qp_num())
    Fatal("a client completion from qp %u, not %u", wc.qp_num, fabric_.client_qp_num());
  size_t at = 0;
  while (at < outstanding_.size() && outstanding_[at].index != wc.wr_id) ++at;
  if (at == outstanding_.size() || outstanding_[at].state != Op::kPending)
    Fatal("a completion (status %s) for wr_id %llu, which is not outstanding",
          ibv_wc_status_str(wc.status), static_cast<unsigned long long>(wc.wr_id));
  // Completions come in posting order: what is still pending before this one produced none,
  // which only an unsignalled success may do, and only before a failure.
  for (size_t i = 0; i < at; ++i) {
    Op& earlier = outstanding_[i];
    if (earlier.state != Op::kPending) continue;
    if (failing_ || earlier.signalled)
      Fatal("operation %llu (%s, %s) got no completion before operation %llu's",
            static_cast<unsigned long long>(earlier.index), KindName(earlier.kind),
            earlier.signalled ? "signalled" : "unsignalled after a failure",
            static_cast<unsigned long long>(wc.wr_id));
    earlier.state = Op::kOk;
  }
  Op& op = outstanding_[at];
  if (wc.status == IBV_WC_SUCCESS) {
    if (failing_) Fatal("operation %llu succeeded after a failure", (unsigned long long)op.index);
    if (!op.signalled) Fatal("unsignalled operation %llu completed", (unsigned long long)op.index);
    CheckSuccess(op, wc);
    op.state = Op::kOk;
  } else {
    op.state = Op::kError;
    op.status = wc.status;
    if (!failing_) {
      failing_ = true;
      first_error_index_ = op.index;
    } else if (wc.status != IBV_WC_WR_FLUSH_ERR) {
      Fatal(
          "operation %llu completed with %s after the first failure; expected "
          "IBV_WC_WR_FLUSH_ERR",
          (unsigned long long)op.index, ibv_wc_status_str(wc.status));
    }
  }
  RetireFront();
}

void SoakDriver::CheckSuccess(const Op& op, const ibv_wc& wc) {
  const uint32_t byte_len = op.kind == kRead ? static_cast<uint32_t>(op.len) : 0;
  if (wc.opcode != SendOpcode(op.kind) || wc.byte_len != byte_len || wc.wc_flags != 0)
    Fatal(
        "operation %llu (%s, %zu bytes): opcode %d byte_len %u wc_flags %u; expected "
        "opcode %d byte_len %u wc_flags 0",
        (unsigned long long)op.index, KindName(op.kind), op.len, wc.opcode, wc.byte_len,
        wc.wc_flags, SendOpcode(op.kind), byte_len);
}

void SoakDriver::RetireFront() {
  while (!outstanding_.empty() && outstanding_.front().state == Op::kOk) {
    Op& op = outstanding_.front();
    ++stats_.kinds[op.kind].ok;
    if (op.kind == kRead) {
      const uint8_t* got = fabric_.read_dst.bytes + op.read_slot * SoakFabric::kReadSlot;
      if (op.len != 0 && memcmp(got, op.snapshot.data(), op.len) != 0) {
        size_t at = 0;
        while (got[at] == op.snapshot[at]) ++at;
        Fatal(
            "read %llu of region %s at offset %zu, %zu bytes: byte %zu is %02x, the model "
            "says %02x",
            (unsigned long long)op.index, Shadow(op.region).name().c_str(), op.offset, op.len, at,
            got[at], op.snapshot[at]);
      }
      stats_.bytes_verified += op.len;
    } else if (op.kind == kFlushPersistent) {
      Shadow(op.region).MakeDurable(op.offset, op.snapshot.data(), op.len);
    }
    outstanding_.pop_front();
  }
}

void SoakDriver::OnServerCompletion(const ibv_wc& wc) {
  if (wc.qp_num != fabric_.server_qp_num())
    Fatal("a server completion from qp %u, not %u", wc.qp_num, fabric_.server_qp_num());
  auto posted = receives_.find(wc.wr_id);
  if (posted == receives_.end())
    Fatal("a receive completion for wr_id %llu, never posted", (unsigned long long)wc.wr_id);
  const size_t slot = posted->second;
  receives_.erase(posted);
  free_slots_.push_back(slot);
  if (wc.status == IBV_WC_WR_FLUSH_ERR && (failing_ || prediction_.op_index != 0)) {
    ++stats_.kinds[kRecv].flushed;
    return;
  }
  if (wc.status != IBV_WC_SUCCESS)
    Fatal("a receive completed with %s", ibv_wc_status_str(wc.status));
  if (messages_.empty()) Fatal("a receive completed, but no message was sent");
  Message message = std::move(messages_.front());
  messages_.pop_front();
  const bool with_imm = message.kind != kSend;
  const ibv_wc_opcode opcode =
      message.kind == kWriteWithImm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
  if (wc.opcode != opcode || wc.byte_len != message.len ||
      ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) != with_imm ||
      (with_imm && wc.imm_data != htonl(message.imm)))
    Fatal(
        "the receive of operation %llu (%s, %zu bytes, imm %u): opcode %d byte_len %u "
        "wc_flags %u imm_data %u",
        (unsigned long long)message.op_index, KindName(message.kind), message.len, message.imm,
        wc.opcode, wc.byte_len, wc.wc_flags, ntohl(wc.imm_data));
  // A send lands in the slot; a write with imm leaves it as it was.
  ShadowRegion& shadow = *shadows_[2];
  const size_t offset = slot * SoakFabric::kRecvSlot;
  if (message.kind != kWriteWithImm) shadow.Place(offset, message.bytes.data(), message.len);
  if (memcmp(fabric_.recv.bytes + offset, shadow.current() + offset, SoakFabric::kRecvSlot) != 0)
    Fatal(
        "the receive of operation %llu (%s, %zu bytes) in slot %zu: the slot differs from "
        "the model",
        (unsigned long long)message.op_index, KindName(message.kind), message.len, slot);
  stats_.bytes_verified += SoakFabric::kRecvSlot;
  ++stats_.kinds[kRecv].ok;
  for (Op& op : outstanding_)
    if (op.index == message.op_index) op.arrived = true;
}

bool SoakDriver::Quiesce() {
  if (!PumpUntil([&] { return outstanding_.empty(); }, "every operation to complete", true))
    return false;
  return PumpUntil([&] { return messages_.empty(); }, "every message to be received", true);
}

void SoakDriver::Checkpoint() {
  for (const auto& shadow : shadows_) {
    Mismatch mismatch = shadow->CheckCurrent();
    if (!mismatch.empty()) Fatal("checkpoint: %s", mismatch.what.c_str());
    stats_.bytes_verified += shadow->size();
  }
  ++stats_.checkpoints;
}

void SoakDriver::Run() {
  SetFailureContext(options_.seed, &current_index_);
  fabric_.Open(options_.seed ^ 0x50414B53ull);
  shadows_.emplace_back(
      new ShadowRegion("target A", fabric_.target_a.bytes, fabric_.target_a.size));
  shadows_.emplace_back(
      new ShadowRegion("target B", fabric_.target_b.bytes, fabric_.target_b.size));
  shadows_.emplace_back(new ShadowRegion("receives", fabric_.recv.bytes, fabric_.recv.size));
  for (size_t slot = SoakFabric::kMaxRecvSlots; slot > 0; --slot) free_slots_.push_back(slot - 1);
  Reconnect(false);
  for (uint64_t index = 1; index <= options_.operations; ++index) {
    Op op = Generate(index);
    // Now and then (and at the end) a quiescent point: its operation is signalled.
    bool event = rng_() % 24 == 0 || index == options_.operations;
    if (event) op.signalled = true;
    while (!Post(&op)) HandleFailure();
    if (!event) continue;
    while (!Quiesce()) HandleFailure();
    if (index == options_.operations) break;
    RunEvent();
  }
  Checkpoint();
  Check(rpma_sim_fault_count(&stats_.rules_fired), "rpma_sim_fault_count");
  Check(rpma_sim_fault_clear(), "rpma_sim_fault_clear");
  fabric_.Close();
}

}  // namespace soak
