// completions.cc -- waiting for a completion with a safety-net timeout, and the assertions
// that say which completion came instead of the one expected.
#include <sched.h>
#include <string.h>

#include <atomic>
#include <sstream>

#include "rpma_sim/testing.h"
#include "testing/test_child.h"

namespace rpma_sim {
namespace testing {
namespace {

std::atomic<int> g_timeout_ms{10000};
thread_local ibv_wc t_last_completion;

#define NAME_CASE(value) \
  case value:            \
    return #value

const char* KnownOpcodeName(int opcode) {
  switch (opcode) {
    NAME_CASE(IBV_WC_SEND);
    NAME_CASE(IBV_WC_RDMA_WRITE);
    NAME_CASE(IBV_WC_RDMA_READ);
    NAME_CASE(IBV_WC_COMP_SWAP);
    NAME_CASE(IBV_WC_FETCH_ADD);
    NAME_CASE(IBV_WC_BIND_MW);
    NAME_CASE(IBV_WC_LOCAL_INV);
    NAME_CASE(IBV_WC_TSO);
    case 8:
      return "IBV_WC_FLUSH";  // rdma-core 45's; rpma_sim.h defines it
      NAME_CASE(IBV_WC_ATOMIC_WRITE);
      NAME_CASE(IBV_WC_RECV);
      NAME_CASE(IBV_WC_RECV_RDMA_WITH_IMM);
  }
  return nullptr;
}

const char* KnownStatusName(int status) {
  switch (status) {
    NAME_CASE(IBV_WC_SUCCESS);
    NAME_CASE(IBV_WC_LOC_LEN_ERR);
    NAME_CASE(IBV_WC_LOC_QP_OP_ERR);
    NAME_CASE(IBV_WC_LOC_EEC_OP_ERR);
    NAME_CASE(IBV_WC_LOC_PROT_ERR);
    NAME_CASE(IBV_WC_WR_FLUSH_ERR);
    NAME_CASE(IBV_WC_MW_BIND_ERR);
    NAME_CASE(IBV_WC_BAD_RESP_ERR);
    NAME_CASE(IBV_WC_LOC_ACCESS_ERR);
    NAME_CASE(IBV_WC_REM_INV_REQ_ERR);
    NAME_CASE(IBV_WC_REM_ACCESS_ERR);
    NAME_CASE(IBV_WC_REM_OP_ERR);
    NAME_CASE(IBV_WC_RETRY_EXC_ERR);
    NAME_CASE(IBV_WC_RNR_RETRY_EXC_ERR);
    NAME_CASE(IBV_WC_LOC_RDD_VIOL_ERR);
    NAME_CASE(IBV_WC_REM_INV_RD_REQ_ERR);
    NAME_CASE(IBV_WC_REM_ABORT_ERR);
    NAME_CASE(IBV_WC_INV_EECN_ERR);
    NAME_CASE(IBV_WC_INV_EEC_STATE_ERR);
    NAME_CASE(IBV_WC_FATAL_ERR);
    NAME_CASE(IBV_WC_RESP_TIMEOUT_ERR);
    NAME_CASE(IBV_WC_GENERAL_ERR);
    NAME_CASE(IBV_WC_TM_ERR);
    NAME_CASE(IBV_WC_TM_RNDV_INCOMPLETE);
  }
  return nullptr;
}

#undef NAME_CASE

// Takes the next completion and compares it; wr_id is compared when `wr_id` is not NULL.
::testing::AssertionResult CheckNextCompletion(const char* cq_expr, rpma_cq* cq,
                                               const uint64_t* wr_id, ibv_wc_opcode opcode,
                                               ibv_wc_status status) {
  ibv_wc wc;
  int ret = NextCompletion(cq, &wc);
  std::ostringstream expected;
  if (wr_id != nullptr) expected << "wr_id 0x" << std::hex << *wr_id << std::dec << " ";
  expected << (status == IBV_WC_SUCCESS ? OpcodeName(opcode) + " " : "") << StatusName(status);
  if (ret == RPMA_E_NO_COMPLETION)
    return ::testing::AssertionFailure()
           << "expected a completion on " << cq_expr << ": " << expected.str()
           << "\n  no completion came within " << TimeoutMs() << " ms";
  if (ret != 0)
    return ::testing::AssertionFailure()
           << "expected a completion on " << cq_expr << ": " << expected.str()
           << "\n  rpma_cq_get_wc failed: " << rpma_err_2str(ret);
  t_last_completion = wc;
  bool same = wc.status == status && (status != IBV_WC_SUCCESS || wc.opcode == opcode) &&
              (wr_id == nullptr || wc.wr_id == *wr_id);
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected a completion on " << cq_expr << ": "
                                       << expected.str() << "\n  came instead: " << Describe(wc);
}

}  // namespace

int TimeoutMs() { return g_timeout_ms.load(); }

void SetTimeoutMs(int ms) {
  if (ms > 0) g_timeout_ms.store(ms);
}

std::string OpcodeName(ibv_wc_opcode opcode) {
  const char* name = KnownOpcodeName(opcode);
  return name != nullptr ? name : "opcode " + std::to_string(static_cast<int>(opcode));
}

std::string StatusName(ibv_wc_status status) {
  const char* name = KnownStatusName(status);
  return name != nullptr ? name : "status " + std::to_string(static_cast<int>(status));
}

std::string Describe(const ibv_wc& wc) {
  std::ostringstream text;
  if (wc.status == IBV_WC_SUCCESS) text << OpcodeName(wc.opcode) << " ";
  text << StatusName(wc.status) << " wr_id 0x" << std::hex << wc.wr_id << std::dec << " byte_len "
       << wc.byte_len;
  return text.str();
}

int NextCompletion(rpma_cq* cq, ibv_wc* wc, int timeout_ms) {
  memset(wc, 0, sizeof(*wc));
  const long long deadline = NowMs() + timeout_ms;
  for (;;) {
    int ret = rpma_cq_get_wc(cq, 1, wc, nullptr);
    if (ret != RPMA_E_NO_COMPLETION || NowMs() >= deadline) return ret;
    sched_yield();
  }
}

const ibv_wc& LastCompletion() { return t_last_completion; }

::testing::AssertionResult CompletionIs(const char* cq_expr, const char*, const char*, rpma_cq* cq,
                                        ibv_wc_opcode opcode, ibv_wc_status status) {
  return CheckNextCompletion(cq_expr, cq, nullptr, opcode, status);
}

::testing::AssertionResult CompletionWithIdIs(const char* cq_expr, const char*, const char*,
                                              const char*, rpma_cq* cq, uint64_t wr_id,
                                              ibv_wc_opcode opcode, ibv_wc_status status) {
  return CheckNextCompletion(cq_expr, cq, &wr_id, opcode, status);
}

}  // namespace testing
}  // namespace rpma_sim
