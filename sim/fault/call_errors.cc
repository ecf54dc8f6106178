// call_errors.cc -- the error codes each of librpma 1.3's fallible functions can return.
//
// From docs/librpma-compatibility.md, "Functions and their error codes" (every error check
// as librpma codes it); a function whose entry lists none fails only on a NULL argument
// (RPMA_E_INVAL). A `call` fault rule may only make a function fail the way librpma itself
// can, or its man page says it can (rpma_mr_remote_from_descriptor's RPMA_E_NOSUPP). A post
// whose send queue is full fails with RPMA_E_PROVIDER, whatever its kind.
#include "sim/fault/call_errors.h"

#include <map>
#include <string>
#include <vector>

namespace rpma_sim {
namespace {

const std::map<std::string, std::vector<Status>>& Table() {
  static const auto* table = new std::map<std::string, std::vector<Status>>{
      {"rpma_utils_get_ibv_context", {Status::kInvalid, Status::kNoMemory, Status::kProvider}},
      {"rpma_utils_ibv_context_is_odp_capable", {Status::kInvalid, Status::kProvider}},
      {"rpma_peer_cfg_new", {Status::kInvalid, Status::kNoMemory}},
      {"rpma_peer_cfg_delete", {Status::kInvalid}},
      {"rpma_peer_cfg_set_direct_write_to_pmem", {Status::kInvalid}},
      {"rpma_peer_cfg_get_direct_write_to_pmem", {Status::kInvalid}},
      {"rpma_peer_cfg_get_descriptor", {Status::kInvalid}},
      {"rpma_peer_cfg_get_descriptor_size", {Status::kInvalid}},
      {"rpma_peer_cfg_from_descriptor", {Status::kInvalid, Status::kNoMemory}},
      {"rpma_peer_new", {Status::kInvalid, Status::kNoMemory, Status::kProvider, Status::kUnknown}},
      {"rpma_peer_delete", {Status::kInvalid, Status::kProvider}},
      {"rpma_mr_reg", {Status::kInvalid, Status::kNoMemory, Status::kProvider}},
      {"rpma_mr_dereg", {Status::kInvalid, Status::kProvider}},
      {"rpma_mr_get_descriptor", {Status::kInvalid}},
      {"rpma_mr_remote_from_descriptor",
       {Status::kInvalid, Status::kNoMemory, Status::kNotSupported}},
      {"rpma_mr_get_descriptor_size", {Status::kInvalid}},
      {"rpma_mr_get_ptr", {Status::kInvalid}},
      {"rpma_mr_get_size", {Status::kInvalid}},
      {"rpma_mr_remote_get_size", {Status::kInvalid}},
      {"rpma_mr_remote_get_flush_type", {Status::kInvalid}},
      {"rpma_mr_remote_delete", {Status::kInvalid}},
      {"rpma_mr_advise", {Status::kInvalid, Status::kNotSupported, Status::kProvider}},
      {"rpma_conn_cfg_new", {Status::kInvalid, Status::kNoMemory}},
      {"rpma_conn_cfg_delete", {Status::kInvalid}},
      {"rpma_conn_cfg_set_timeout", {Status::kInvalid}},
      {"rpma_conn_cfg_get_timeout", {Status::kInvalid}},
      {"rpma_conn_cfg_set_cq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_get_compl_channel", {Status::kInvalid}},
      {"rpma_conn_cfg_set_compl_channel", {Status::kInvalid}},
      {"rpma_conn_cfg_get_cq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_set_rcq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_get_rcq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_set_sq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_get_sq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_set_rq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_get_rq_size", {Status::kInvalid}},
      {"rpma_conn_cfg_set_srq", {Status::kInvalid}},
      {"rpma_conn_cfg_get_srq", {Status::kInvalid}},
      {"rpma_conn_get_event_fd", {Status::kInvalid}},
      {"rpma_conn_next_event",
       {Status::kInvalid, Status::kNoMemory, Status::kNoEvent, Status::kProvider,
        Status::kUnknown}},
      {"rpma_conn_get_private_data", {Status::kInvalid}},
      {"rpma_conn_apply_remote_peer_cfg", {Status::kInvalid}},
      {"rpma_conn_get_qp_num", {Status::kInvalid}},
      {"rpma_conn_get_cq", {Status::kInvalid}},
      {"rpma_conn_get_rcq", {Status::kInvalid}},
      {"rpma_conn_disconnect", {Status::kInvalid, Status::kProvider}},
      {"rpma_conn_delete", {Status::kInvalid, Status::kProvider}},
      {"rpma_conn_req_new", {Status::kInvalid, Status::kNoMemory, Status::kProvider}},
      {"rpma_conn_req_delete", {Status::kInvalid, Status::kProvider}},
      {"rpma_conn_req_connect", {Status::kInvalid, Status::kNoMemory, Status::kProvider}},
      {"rpma_conn_get_compl_fd", {Status::kInvalid, Status::kNotSharedChannel}},
      {"rpma_conn_wait",
       {Status::kInvalid, Status::kNotSharedChannel, Status::kNoCompletion, Status::kProvider,
        Status::kUnknown}},
      {"rpma_conn_req_recv", {Status::kInvalid, Status::kProvider}},
      {"rpma_ep_listen", {Status::kInvalid, Status::kNoMemory, Status::kProvider}},
      {"rpma_ep_shutdown", {Status::kInvalid, Status::kProvider}},
      {"rpma_ep_get_fd", {Status::kInvalid}},
      {"rpma_ep_next_conn_req",
       {Status::kInvalid, Status::kNoMemory, Status::kNoEvent, Status::kProvider}},
      {"rpma_conn_req_get_private_data", {Status::kInvalid}},
      {"rpma_srq_cfg_new", {Status::kInvalid, Status::kNoMemory}},
      {"rpma_srq_cfg_delete", {Status::kInvalid}},
      {"rpma_srq_cfg_set_rq_size", {Status::kInvalid}},
      {"rpma_srq_cfg_get_rq_size", {Status::kInvalid}},
      {"rpma_srq_cfg_set_rcq_size", {Status::kInvalid}},
      {"rpma_srq_cfg_get_rcq_size", {Status::kInvalid}},
      {"rpma_srq_new", {Status::kInvalid, Status::kNoMemory, Status::kProvider}},
      {"rpma_srq_delete", {Status::kInvalid, Status::kProvider}},
      {"rpma_srq_recv", {Status::kInvalid, Status::kProvider}},
      {"rpma_srq_get_rcq", {Status::kInvalid}},
      {"rpma_read", {Status::kInvalid, Status::kProvider}},
      {"rpma_write", {Status::kInvalid, Status::kProvider}},
      {"rpma_write_with_imm", {Status::kInvalid, Status::kProvider}},
      {"rpma_atomic_write", {Status::kInvalid, Status::kProvider}},
      {"rpma_flush", {Status::kInvalid, Status::kNotSupported, Status::kProvider}},
      {"rpma_send", {Status::kInvalid, Status::kProvider}},
      {"rpma_send_with_imm", {Status::kInvalid, Status::kProvider}},
      {"rpma_recv", {Status::kInvalid, Status::kProvider}},
      {"rpma_cq_get_fd", {Status::kInvalid}},
      {"rpma_cq_wait",
       {Status::kInvalid, Status::kNoCompletion, Status::kProvider, Status::kSharedChannel}},
      {"rpma_cq_get_wc",
       {Status::kInvalid, Status::kNoCompletion, Status::kProvider, Status::kUnknown}},
      {"rpma_log_set_threshold", {Status::kAgain, Status::kInvalid}},
      {"rpma_log_get_threshold", {Status::kInvalid}},
      {"rpma_log_set_function", {Status::kAgain}},
  };
  return *table;
}

}  // namespace

bool IsLibrpmaFunction(const std::string& function) { return Table().count(function) != 0; }

bool CanReturn(const std::string& function, Status error) {
  auto it = Table().find(function);
  if (it == Table().end()) return false;
  for (Status allowed : it->second)
    if (allowed == error) return true;
  return false;
}

}  // namespace rpma_sim
