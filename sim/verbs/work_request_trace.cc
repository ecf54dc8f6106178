// work_request_trace.cc -- work requests, receives and connection instants as trace events.
#include "sim/verbs/work_request_trace.h"

#include <inttypes.h>
#include <stdio.h>

#include <algorithm>

#include "sim/common/trace.h"

namespace rpma_sim {
namespace {

const char* OpcodeName(const SendRequest& request) {
  switch (request.opcode) {
    case SendOpcode::kWrite:
      return request.with_imm ? "write_with_imm" : "write";
    case SendOpcode::kRead:
      return "read";
    case SendOpcode::kAtomicWrite:
      return "atomic_write";
    case SendOpcode::kFlush:
      return "flush";
    case SendOpcode::kSend:
      return request.with_imm ? "send_with_imm" : "send";
  }
  return "?";
}

const char* ReceiveOpcodeName(ibv_wc_opcode opcode) {
  return opcode == IBV_WC_RECV_RDMA_WITH_IMM ? "recv (write_with_imm)" : "recv";
}

std::string Hex(uint64_t value) {
  char text[24];
  snprintf(text, sizeof(text), "\"0x%" PRIx64 "\"", value);
  return text;
}

std::string StatusArgs(ibv_wc_status status) {
  return std::string("\"status\":\"") + WorkRequestTrace::StatusName(status) + "\"";
}

}  // namespace

const char* WorkRequestTrace::StatusName(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS:
      return "IBV_WC_SUCCESS";
    case IBV_WC_LOC_LEN_ERR:
      return "IBV_WC_LOC_LEN_ERR";
    case IBV_WC_LOC_QP_OP_ERR:
      return "IBV_WC_LOC_QP_OP_ERR";
    case IBV_WC_LOC_EEC_OP_ERR:
      return "IBV_WC_LOC_EEC_OP_ERR";
    case IBV_WC_LOC_PROT_ERR:
      return "IBV_WC_LOC_PROT_ERR";
    case IBV_WC_WR_FLUSH_ERR:
      return "IBV_WC_WR_FLUSH_ERR";
    case IBV_WC_MW_BIND_ERR:
      return "IBV_WC_MW_BIND_ERR";
    case IBV_WC_BAD_RESP_ERR:
      return "IBV_WC_BAD_RESP_ERR";
    case IBV_WC_LOC_ACCESS_ERR:
      return "IBV_WC_LOC_ACCESS_ERR";
    case IBV_WC_REM_INV_REQ_ERR:
      return "IBV_WC_REM_INV_REQ_ERR";
    case IBV_WC_REM_ACCESS_ERR:
      return "IBV_WC_REM_ACCESS_ERR";
    case IBV_WC_REM_OP_ERR:
      return "IBV_WC_REM_OP_ERR";
    case IBV_WC_RETRY_EXC_ERR:
      return "IBV_WC_RETRY_EXC_ERR";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "IBV_WC_RNR_RETRY_EXC_ERR";
    case IBV_WC_LOC_RDD_VIOL_ERR:
      return "IBV_WC_LOC_RDD_VIOL_ERR";
    case IBV_WC_REM_INV_RD_REQ_ERR:
      return "IBV_WC_REM_INV_RD_REQ_ERR";
    case IBV_WC_REM_ABORT_ERR:
      return "IBV_WC_REM_ABORT_ERR";
    case IBV_WC_INV_EECN_ERR:
      return "IBV_WC_INV_EECN_ERR";
    case IBV_WC_INV_EEC_STATE_ERR:
      return "IBV_WC_INV_EEC_STATE_ERR";
    case IBV_WC_FATAL_ERR:
      return "IBV_WC_FATAL_ERR";
    case IBV_WC_RESP_TIMEOUT_ERR:
      return "IBV_WC_RESP_TIMEOUT_ERR";
    case IBV_WC_GENERAL_ERR:
      return "IBV_WC_GENERAL_ERR";
    case IBV_WC_TM_ERR:
      return "IBV_WC_TM_ERR";
    case IBV_WC_TM_RNDV_INCOMPLETE:
      return "IBV_WC_TM_RNDV_INCOMPLETE";
  }
  return "IBV_WC_?";
}

std::string WorkRequestTrace::Label(uint32_t qp_num, const ConnectionTag& tag) {
  std::string qp = "qp " + std::to_string(qp_num);
  if (tag.ordinal == 0) return qp;
  return std::string(SideName(tag.side)) + " conn " + std::to_string(tag.ordinal) + " (" + qp + ")";
}

void WorkRequestTrace::NameConnection(uint32_t qp_num, const ConnectionTag& tag) {
  if (!trace::On()) return;
  trace::NameTrack(ConnectionTrack(qp_num), Label(qp_num, tag));
}

void WorkRequestTrace::Instant(uint32_t qp_num, const char* category, const std::string& name,
                               const std::string& args) {
  if (!trace::On()) return;
  uint64_t track = ConnectionTrack(qp_num);
  if (!trace::TrackNamed(track)) trace::NameTrack(track, Label(qp_num, ConnectionTag()));
  trace::Instant(track, category, name, args);
}

uint64_t WorkRequestTrace::Lane(std::vector<uint64_t>* ends, uint64_t start, uint64_t end,
                                bool* added) {
  *added = false;
  for (size_t lane = 0; lane < ends->size(); ++lane) {
    if ((*ends)[lane] <= start) {
      (*ends)[lane] = end;
      return lane;
    }
  }
  if (ends->size() < kLanes) {
    *added = true;
    ends->push_back(end);
    return ends->size() - 1;
  }
  ends->back() = std::max(ends->back(), end);  // more under way than tracks: they overlap
  return kLanes - 1;
}

void WorkRequestTrace::Sent(uint32_t qp_num, const ConnectionTag& tag, const SendRequest& request,
                            uint64_t sequence, ibv_wc_status status) {
  if (!trace::On()) return;
  uint64_t end = trace::NowNs();
  uint64_t start = request.trace_post_ns != 0 ? request.trace_post_ns : end;
  bool added;
  uint64_t lane = Lane(&send_ends_, start, end, &added);
  uint64_t track = ConnectionTrack(qp_num) + lane;
  if (added) {  // lane 0 may be named already (NameConnection): the first name stays
    std::string label = Label(qp_num, tag);
    trace::NameTrack(track, lane == 0 ? label : label + " sends +" + std::to_string(lane));
  }
  std::string args = "\"seq\":" + std::to_string(sequence) +
                     ",\"wr_id\":" + std::to_string(request.wr_id) +
                     ",\"len\":" + std::to_string(request.length) + "," + StatusArgs(status) +
                     ",\"signaled\":" + (request.signaled ? "true" : "false");
  if (request.opcode != SendOpcode::kSend) {
    args += ",\"remote_addr\":" + Hex(request.remote_addr) + ",\"rkey\":" + Hex(request.rkey);
  }
  const char* color = nullptr;
  if (request.opcode == SendOpcode::kFlush) {
    args += std::string(",\"type\":\"") +
            (request.flush_kind == FlushKind::kPersistent ? "RPMA_FLUSH_TYPE_PERSISTENT"
                                                          : "RPMA_FLUSH_TYPE_VISIBILITY") +
            "\"";
    color = "yellow";
  }
  if (status != IBV_WC_SUCCESS) color = "terrible";
  trace::Slice(track, request.opcode == SendOpcode::kFlush ? "wr,flush" : "wr", OpcodeName(request),
               start, end, args, color);
}

void WorkRequestTrace::Received(uint32_t qp_num, const ConnectionTag& tag,
                                const ReceiveRequest& request, ibv_wc_status status,
                                ibv_wc_opcode opcode, uint32_t byte_len) {
  if (!trace::On()) return;
  uint64_t end = trace::NowNs();
  uint64_t start = request.trace_post_ns != 0 ? request.trace_post_ns : end;
  bool added;
  uint64_t lane = Lane(&receive_ends_, start, end, &added);
  uint64_t track = ConnectionTrack(qp_num) + kLanes + lane;
  if (added) {
    std::string label = Label(qp_num, tag) + " receives";
    trace::NameTrack(track, lane == 0 ? label : label + " +" + std::to_string(lane));
  }
  std::string args = "\"wr_id\":" + std::to_string(request.wr_id) +
                     ",\"posted_len\":" + std::to_string(request.length) +
                     ",\"byte_len\":" + std::to_string(byte_len) + "," + StatusArgs(status);
  trace::Slice(track, "wr,recv", ReceiveOpcodeName(opcode), start, end, args,
               status != IBV_WC_SUCCESS ? "terrible" : nullptr);
}

}  // namespace rpma_sim
