// send_request.h -- a send-side work request as the simulated NIC carries it.
//
// The api layer builds one per rpma_read / rpma_write / rpma_write_with_imm /
// rpma_atomic_write / rpma_flush / rpma_send / rpma_send_with_imm and hands it to
// QueuePair::PostSend, the single post path of every operation.
#ifndef RPMA_SIM_VERBS_SEND_REQUEST_H_
#define RPMA_SIM_VERBS_SEND_REQUEST_H_

#include <infiniband/verbs.h>
#include <stdint.h>

#include <memory>

#include "sim/pmem/placed_ranges.h"
#include "sim/verbs/memory_region.h"

namespace rpma_sim {

enum class SendOpcode {
  kWrite,        // IBV_WR_RDMA_WRITE (with_imm: IBV_WR_RDMA_WRITE_WITH_IMM)
  kRead,         // IBV_WR_RDMA_READ
  kAtomicWrite,  // 8 bytes, never torn; source copied at post
  kFlush,        // read-after-write (portable) or IBV_WR_FLUSH (native)
  kSend,         // IBV_WR_SEND (with_imm: IBV_WR_SEND_WITH_IMM)
};

struct SendRequest {
  SendOpcode opcode = SendOpcode::kWrite;
  uint64_t wr_id = 0;
  bool signaled = false;

  // Local buffer: nullptr for a 0-byte operation.
  std::shared_ptr<MemoryRegion> local;
  uint64_t local_offset = 0;
  uint64_t length = 0;

  // Remote buffer (reads, writes, atomic writes, flushes).
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;

  bool with_imm = false;
  uint32_t imm_data = 0;  // already in network byte order

  uint8_t inline_data[8] = {};  // atomic write source
  FlushKind flush_kind = FlushKind::kVisibility;

  // Fault injection: the responder answers with this remote error (IsResponderStatus)
  // without executing the request; IBV_WC_SUCCESS (almost always) for none.
  ibv_wc_status responder_fails = IBV_WC_SUCCESS;

  // When it was posted (trace::NowNs), while RPMA_SIM_TRACE is on; 0 otherwise.
  uint64_t trace_post_ns = 0;
};

// The remote errors a requester's fault rule can make its responder answer with.
// The requester's own errors: hardware finds them before the request leaves (a bad local
// key, length or access, an operation the queue pair cannot do), so it never reaches the
// responder.
inline bool IsLocalRequesterStatus(ibv_wc_status status) {
  return status == IBV_WC_LOC_LEN_ERR || status == IBV_WC_LOC_QP_OP_ERR ||
         status == IBV_WC_LOC_PROT_ERR || status == IBV_WC_LOC_ACCESS_ERR ||
         status == IBV_WC_MW_BIND_ERR;
}

inline bool IsResponderStatus(ibv_wc_status status) {
  return status == IBV_WC_REM_OP_ERR || status == IBV_WC_REM_INV_REQ_ERR;
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_SEND_REQUEST_H_
