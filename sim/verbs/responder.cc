// responder.cc -- executing a work request at the target: rkey, bounds and access checks,
// placing or fetching the bytes, consuming receives, and the statuses hardware reports.
#include <arpa/inet.h>
#include <string.h>

#include "sim/verbs/queue_pair.h"

namespace rpma_sim {
namespace {

// The local buffer of a request: registered in the requester's protection domain, inside the
// region, with the access needed.
ibv_wc_status CheckLocal(const MemoryRegionTable& table, const SendRequest& request,
                         const ProtectionDomain* pd, int required_access) {
  if (!request.local || request.length == 0) return IBV_WC_SUCCESS;
  const MemoryRegion& local = *request.local;
  if (!table.IsRegisteredLocked(local) || local.pd != pd) return IBV_WC_LOC_PROT_ERR;
  if (!local.ContainsOffset(request.local_offset, request.length)) return IBV_WC_LOC_PROT_ERR;
  if ((local.access & required_access) != required_access) return IBV_WC_LOC_PROT_ERR;
  return IBV_WC_SUCCESS;
}

// The remote buffer of a one-sided request in the responder's protection domain, or nullptr
// with IBV_WC_REM_ACCESS_ERR.
uint8_t* FindRemote(const MemoryRegionTable& table, const ProtectionDomain* pd, uint32_t rkey,
                    uint64_t address, uint64_t len, int required_access, ibv_wc_status* status) {
  const MemoryRegion* region = table.FindLocked(rkey);
  if (region == nullptr || region->pd != pd ||
      (region->access & required_access) != required_access ||
      !region->Contains(address, len)) {
    *status = IBV_WC_REM_ACCESS_ERR;
    return nullptr;
  }
  *status = IBV_WC_SUCCESS;
  return reinterpret_cast<uint8_t*>(address);
}

uint8_t* LocalBytes(const SendRequest& request) {
  return request.local ? request.local->addr + request.local_offset : nullptr;
}

}  // namespace

QueuePair::Outcome QueuePair::Execute(const SendRequest& request, QueuePair* responder) {
  if (request.opcode == SendOpcode::kSend) return ExecuteMessage(request, responder);
  MemoryRegionTable& table = MemoryRegionTable::Get();
  auto table_lock = table.LockShared();
  Outcome outcome;
  int local_access = request.opcode == SendOpcode::kRead ? IBV_ACCESS_LOCAL_WRITE : 0;
  outcome.status = CheckLocal(table, request, pd(), local_access);
  if (outcome.status != IBV_WC_SUCCESS) return outcome;

  // write_with_imm needs a receive before any byte is placed (RNR otherwise).
  ReceiveRequest receive;
  if (request.with_imm && !responder->TakeReceiveLocked(&receive)) {
    outcome.receiver_not_ready = true;
    return outcome;
  }

  uint8_t* remote = nullptr;
  switch (request.opcode) {
    case SendOpcode::kWrite:
      if (request.length == 0) break;  // a 0-byte write checks no key
      remote = FindRemote(table, responder->pd(), request.rkey, request.remote_addr, request.length,
                          IBV_ACCESS_REMOTE_WRITE, &outcome.status);
      if (remote != nullptr) memcpy(remote, LocalBytes(request), request.length);
      break;
    case SendOpcode::kRead:
      if (request.length == 0) break;
      remote = FindRemote(table, responder->pd(), request.rkey, request.remote_addr, request.length,
                          IBV_ACCESS_REMOTE_READ, &outcome.status);
      if (remote != nullptr) memcpy(LocalBytes(request), remote, request.length);
      break;
    case SendOpcode::kAtomicWrite:
      remote = FindRemote(table, responder->pd(), request.rkey, request.remote_addr, sizeof(uint64_t),
                          IBV_ACCESS_REMOTE_WRITE, &outcome.status);
      if (remote != nullptr) {
        uint64_t value;
        memcpy(&value, request.inline_data, sizeof(value));
        bool aligned = reinterpret_cast<uintptr_t>(remote) % sizeof(uint64_t) == 0;
        if (aligned)
          __atomic_store_n(reinterpret_cast<uint64_t*>(remote), value, __ATOMIC_SEQ_CST);
        else if (!native_atomic_write_)
          memcpy(remote, &value, sizeof(value));  // the portable path is a plain 8-byte write
        else
          outcome.status = IBV_WC_REM_INV_REQ_ERR;  // native atomics need natural alignment
      }
      break;
    case SendOpcode::kFlush: {
      // Portable path: an 8-byte read at the flushed address; native: the whole range.
      uint64_t len = native_flush_ ? request.length : sizeof(uint64_t);
      FindRemote(table, responder->pd(), request.rkey, request.remote_addr, len, IBV_ACCESS_REMOTE_READ,
                 &outcome.status);
      break;
    }
    case SendOpcode::kSend: break;
  }
  if (outcome.status != IBV_WC_SUCCESS) {
    outcome.remote_error = true;
    if (request.with_imm)
      responder->CompleteReceiveLocked(receive, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, nullptr);
    return outcome;
  }
  if (request.with_imm) {
    responder->CompleteReceiveLocked(receive, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
                                     static_cast<uint32_t>(request.length), &request);
  }
  return outcome;
}

QueuePair::Outcome QueuePair::ExecuteMessage(const SendRequest& request, QueuePair* responder) {
  MemoryRegionTable& table = MemoryRegionTable::Get();
  auto table_lock = table.LockShared();
  Outcome outcome;
  outcome.status = CheckLocal(table, request, pd(), 0);
  if (outcome.status != IBV_WC_SUCCESS) return outcome;
  ReceiveRequest receive;
  if (!responder->TakeReceiveLocked(&receive)) {
    outcome.receiver_not_ready = true;
    return outcome;
  }
  ibv_wc_status receiver_status = IBV_WC_SUCCESS;
  if (request.length > receive.length) {
    receiver_status = IBV_WC_LOC_LEN_ERR;
    outcome.status = IBV_WC_REM_INV_REQ_ERR;
  } else if (request.length > 0 &&
             (!table.IsRegisteredLocked(*receive.region) ||
              receive.region->pd != responder->pd() ||
              !receive.region->ContainsOffset(receive.offset, request.length) ||
              (receive.region->access & IBV_ACCESS_LOCAL_WRITE) == 0)) {
    receiver_status = IBV_WC_LOC_PROT_ERR;
    outcome.status = IBV_WC_REM_OP_ERR;
  }
  if (receiver_status != IBV_WC_SUCCESS) {
    outcome.remote_error = true;
    responder->CompleteReceiveLocked(receive, receiver_status, IBV_WC_RECV, 0, nullptr);
    return outcome;
  }
  if (request.length > 0)
    memcpy(receive.region->addr + receive.offset, LocalBytes(request), request.length);
  responder->CompleteReceiveLocked(receive, IBV_WC_SUCCESS, IBV_WC_RECV,
                                   static_cast<uint32_t>(request.length), &request);
  return outcome;
}

bool QueuePair::TakeReceiveLocked(ReceiveRequest* request) {
  if (config_.srq) return config_.srq->receives().Take(request);
  return receives_.Take(request);
}

void QueuePair::CompleteReceiveLocked(const ReceiveRequest& request, ibv_wc_status status,
                                      ibv_wc_opcode opcode, uint32_t byte_len,
                                      const SendRequest* sender) {
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  wc.wr_id = request.wr_id;
  wc.status = status;
  wc.qp_num = qp_num_;
  if (status == IBV_WC_SUCCESS) {
    wc.opcode = opcode;
    wc.byte_len = byte_len;
    if (sender != nullptr && sender->with_imm) {
      wc.wc_flags = IBV_WC_WITH_IMM;
      wc.imm_data = sender->imm_data;
    }
  }
  CompletionQueue* cq = config_.srq && config_.srq->rcq() ? config_.srq->rcq().get()
                        : config_.recv_cq                 ? config_.recv_cq.get()
                                                          : config_.send_cq.get();
  cq->Push(wc);
}

}  // namespace rpma_sim
