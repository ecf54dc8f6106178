// remote_access.cc -- rpma_read, rpma_write, rpma_write_with_imm, rpma_atomic_write and
// rpma_flush: librpma's argument checks, then one work request on the connection's queue
// pair. Bounds, keys and access rights are the simulated NIC's business (error completions).
#include <arpa/inet.h>
#include <librpma.h>
#include <string.h>

#include <optional>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/fabric/config.h"

namespace {

constexpr int kCompletionOnSuccess = RPMA_F_COMPLETION_ALWAYS & ~RPMA_F_COMPLETION_ON_ERROR;

// librpma's rule for read/write/write_with_imm: both regions, or neither with all zeros.
bool InvalidTransfer(const void* local, size_t local_offset, const void* remote,
                     size_t remote_offset, size_t len) {
  if (local != nullptr && remote != nullptr) return false;
  return local != nullptr || remote != nullptr || local_offset != 0 || remote_offset != 0 ||
         len != 0;
}

rpma_sim::SendRequest MakeRequest(rpma_sim::SendOpcode opcode, int flags, const void* op_context) {
  rpma_sim::SendRequest request;
  request.opcode = opcode;
  request.wr_id = reinterpret_cast<uint64_t>(op_context);
  request.signaled = (flags & kCompletionOnSuccess) != 0;
  return request;
}

void SetRemote(rpma_sim::SendRequest* request, const rpma_mr_remote* remote, size_t offset) {
  if (remote == nullptr) return;
  request->remote_addr = remote->raddr + offset;
  request->rkey = remote->rkey;
}

void SetLocal(rpma_sim::SendRequest* request, const rpma_mr_local* local, size_t offset,
              size_t len) {
  if (local != nullptr) request->local = local->region;
  request->local_offset = offset;
  request->length = len;
}

int Post(struct rpma_conn* conn, const rpma_sim::SendRequest& request) {
  return ToRpmaError(conn->connection->qp().PostSend(request));
}

}  // namespace

int rpma_read(struct rpma_conn* conn, struct rpma_mr_local* dst, size_t dst_offset,
              const struct rpma_mr_remote* src, size_t src_offset, size_t len, int flags,
              const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_read");
  if (conn == nullptr || flags == 0 || InvalidTransfer(dst, dst_offset, src, src_offset, len))
    return RPMA_E_INVAL;
  if (InheritedPost(__func__, *conn, dst)) return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_read");
  rpma_sim::SendRequest request = MakeRequest(rpma_sim::SendOpcode::kRead, flags, op_context);
  SetLocal(&request, dst, dst_offset, len);
  SetRemote(&request, src, src_offset);
  return Post(conn, request);
}

static int PostWrite(const char* call, struct rpma_conn* conn, struct rpma_mr_remote* dst,
                     size_t dst_offset, const struct rpma_mr_local* src, size_t src_offset,
                     size_t len, int flags, std::optional<uint32_t> imm, const void* op_context) {
  if (conn == nullptr || flags == 0 || InvalidTransfer(src, src_offset, dst, dst_offset, len))
    return RPMA_E_INVAL;
  if (InheritedPost(call, *conn, src)) return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_NOSUPP, "rpma_mr_write");
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_write");
  rpma_sim::SendRequest request = MakeRequest(rpma_sim::SendOpcode::kWrite, flags, op_context);
  SetLocal(&request, src, src_offset, len);
  SetRemote(&request, dst, dst_offset);
  request.with_imm = imm.has_value();
  request.imm_data = htonl(imm.value_or(0));
  return Post(conn, request);
}

int rpma_write(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset,
               const struct rpma_mr_local* src, size_t src_offset, size_t len, int flags,
               const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_write");
  return PostWrite(__func__, conn, dst, dst_offset, src, src_offset, len, flags, std::nullopt,
                   op_context);
}

int rpma_write_with_imm(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset,
                        const struct rpma_mr_local* src, size_t src_offset, size_t len, int flags,
                        uint32_t imm, const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_write_with_imm");
  return PostWrite(__func__, conn, dst, dst_offset, src, src_offset, len, flags, imm, op_context);
}

int rpma_atomic_write(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset,
                      const char src[8], int flags, const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_atomic_write");
  if (conn == nullptr || dst == nullptr || src == nullptr || flags == 0) return RPMA_E_INVAL;
  if (dst_offset % RPMA_ATOMIC_WRITE_ALIGNMENT != 0) return RPMA_E_INVAL;
  if (InheritedPost(__func__, *conn, nullptr)) return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_atomic_write");
  rpma_sim::SendRequest request =
      MakeRequest(rpma_sim::SendOpcode::kAtomicWrite, flags, op_context);
  SetRemote(&request, dst, dst_offset);
  request.length = RPMA_ATOMIC_WRITE_ALIGNMENT;
  memcpy(request.inline_data, src, RPMA_ATOMIC_WRITE_ALIGNMENT);  // copied at post
  return Post(conn, request);
}

int rpma_flush(struct rpma_conn* conn, struct rpma_mr_remote* dst, size_t dst_offset, size_t len,
               enum rpma_flush_type type, int flags, const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_NOSUPP, "rpma_flush");
  if (conn == nullptr || dst == nullptr || flags == 0) return RPMA_E_INVAL;
  if (type != RPMA_FLUSH_TYPE_PERSISTENT && type != RPMA_FLUSH_TYPE_VISIBILITY)
    return RPMA_E_INVAL;  // the man page's rule (librpma's code forgets it)
  if (InheritedPost(__func__, *conn, nullptr)) return RPMA_E_PROVIDER;
  // librpma reads the target's flush types through rpma_mr_remote_get_flush_type, ignoring
  // its result: when its point fires the types read as none.
  bool no_flush_type = RPMA_FAULT_FIRES(RPMA_E_INVAL, "rpma_mr_remote_get_flush_type");
  if (type == RPMA_FLUSH_TYPE_PERSISTENT) {
    if (!conn->direct_write_to_pmem) return RPMA_E_NOSUPP;
    if (no_flush_type || (dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) == 0)
      return RPMA_E_NOSUPP;
  } else if (no_flush_type || (dst->usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY) == 0) {
    return RPMA_E_NOSUPP;
  }
  bool native = rpma_sim::GetDeviceCaps().native_flush;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER,
                   native ? "rpma_native_flush_execute" : "rpma_flush_apm_execute");
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, native ? "rpma_mr_flush" : "rpma_mr_read");
  rpma_sim::SendRequest request = MakeRequest(rpma_sim::SendOpcode::kFlush, flags, op_context);
  SetRemote(&request, dst, dst_offset);
  request.length = len;
  request.flush_kind = type == RPMA_FLUSH_TYPE_PERSISTENT ? rpma_sim::FlushKind::kPersistent
                                                          : rpma_sim::FlushKind::kVisibility;
  return Post(conn, request);
}
