// messaging.cc -- rpma_send, rpma_send_with_imm and rpma_recv: two-sided messages.
#include <arpa/inet.h>
#include <librpma.h>

#include <optional>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/receive_request.h"
#include "api/status_map.h"
#include "api/types.h"

namespace {

int PostSendMessage(const char* call, struct rpma_conn* conn, const struct rpma_mr_local* src,
                    size_t offset, size_t len, int flags, std::optional<uint32_t> imm,
                    const void* op_context) {
  if (conn == nullptr || flags == 0 || (src == nullptr && (offset != 0 || len != 0)))
    return RPMA_E_INVAL;
  if (InheritedPost(call, *conn, src)) return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_NOSUPP, "rpma_mr_send");
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_send");
  rpma_sim::SendRequest request;
  request.opcode = rpma_sim::SendOpcode::kSend;
  request.wr_id = reinterpret_cast<uint64_t>(op_context);
  request.signaled = (flags & (RPMA_F_COMPLETION_ALWAYS & ~RPMA_F_COMPLETION_ON_ERROR)) != 0;
  if (src != nullptr) request.local = src->region;
  request.local_offset = offset;
  request.length = len;
  request.with_imm = imm.has_value();
  request.imm_data = htonl(imm.value_or(0));
  return ToRpmaError(conn->connection->qp().PostSend(request));
}

}  // namespace

int rpma_send(struct rpma_conn* conn, const struct rpma_mr_local* src, size_t offset, size_t len,
              int flags, const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_send");
  return PostSendMessage(__func__, conn, src, offset, len, flags, std::nullopt, op_context);
}

int rpma_send_with_imm(struct rpma_conn* conn, const struct rpma_mr_local* src, size_t offset,
                       size_t len, int flags, uint32_t imm, const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_send_with_imm");
  return PostSendMessage(__func__, conn, src, offset, len, flags, imm, op_context);
}

int rpma_recv(struct rpma_conn* conn, struct rpma_mr_local* dst, size_t offset, size_t len,
              const void* op_context) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_recv");
  if (conn == nullptr || (dst == nullptr && (offset != 0 || len != 0))) return RPMA_E_INVAL;
  if (InheritedPost(__func__, *conn, dst)) return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_mr_recv");
  return ToRpmaError(
      conn->connection->qp().PostReceive(MakeReceiveRequest(dst, offset, len, op_context)));
}
