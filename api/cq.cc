// cq.cc -- rpma_cq_*: the completion channel fd, waiting for one completion event (and
// re-arming), and polling completions.
#include <librpma.h>

#include <optional>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/inherited.h"
#include "api/one_thread.h"
#include "api/status_map.h"
#include "api/types.h"
#include "sim/common/log.h"

int rpma_cq_get_fd(const struct rpma_cq* cq, int* fd) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_cq_get_fd");
  if (cq == nullptr || fd == nullptr) return RPMA_E_INVAL;
  if (Inherited(*cq, __func__, "completion queue")) return RPMA_E_INVAL;
  *fd = cq->cq->channel()->fd();
  return 0;
}

int rpma_cq_wait(struct rpma_cq* cq) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_cq_wait");
  if (cq == nullptr) return RPMA_E_INVAL;
  if (Inherited(*cq, __func__, "completion queue")) return RPMA_E_PROVIDER;
  if (cq->shared_channel) return RPMA_E_SHARED_CHANNEL;
  // Its connection is not deleted while this waits (rpma_conn_delete says INVAL).
  std::optional<CallOn> counted;
  if (cq->connection != nullptr)
    counted.emplace(*cq->connection, __func__, "connection", Sharing::kAllowed);
  RPMA_FAULT_POINT(RPMA_E_NO_COMPLETION, "rpma_cq_wait");
  rpma_sim::CompletionQueue* fired = nullptr;
  rpma_sim::Status status = cq->cq->channel()->GetEvent(&fired);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_cq_wait");  // before re-arming
  cq->cq->Arm();
  return 0;
}

int rpma_cq_get_wc(struct rpma_cq* cq, int num_entries, struct ibv_wc* wc, int* num_entries_got) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_cq_get_wc");
  if (cq == nullptr || num_entries < 1 || wc == nullptr) return RPMA_E_INVAL;
  if (num_entries > 1 && num_entries_got == nullptr) return RPMA_E_INVAL;
  if (Inherited(*cq, __func__, "completion queue")) return RPMA_E_PROVIDER;
  RPMA_FAULT_POINT(RPMA_E_PROVIDER, "rpma_cq_get_wc");
  int got = cq->cq->Poll(num_entries, wc);
  if (got < 0) {
    // ibv_poll_cq fails on a queue that overflowed (completion_queue.h); said once.
    if (cq->cq->TakeOverflowReport())
      SIM_LOG_ERROR("ibv_poll_cq: the completion queue overflowed: %llu completions lost",
                    static_cast<unsigned long long>(cq->cq->lost()));
    return RPMA_E_PROVIDER;
  }
  if (got == 0) return RPMA_E_NO_COMPLETION;
  if (num_entries_got != nullptr) *num_entries_got = got;
  // These two points count and print, but the completions are taken: failing here would
  // lose them and leave the application waiting for ever, so the result stands (librpma
  // pull request 1975: fault injection cannot falsify rpma_cq_get_wc's results).
  (void)RPMA_FAULT_FIRES(RPMA_E_NO_COMPLETION, "rpma_cq_get_wc");
  (void)RPMA_FAULT_FIRES(RPMA_E_UNKNOWN, "rpma_cq_get_wc");
  return 0;
}
