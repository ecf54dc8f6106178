// cq.cc -- rpma_cq_*: the completion channel fd, waiting for one completion event (and
// re-arming), and polling completions.
#include <librpma.h>

#include "api/api_prologue.h"
#include "api/status_map.h"
#include "api/types.h"

int rpma_cq_get_fd(const struct rpma_cq* cq, int* fd) {
  RPMA_API_PROLOGUE();
  if (cq == nullptr || fd == nullptr) return RPMA_E_INVAL;
  *fd = cq->cq->channel()->fd();
  return 0;
}

int rpma_cq_wait(struct rpma_cq* cq) {
  RPMA_API_PROLOGUE();
  if (cq == nullptr) return RPMA_E_INVAL;
  if (cq->shared_channel) return RPMA_E_SHARED_CHANNEL;
  rpma_sim::CompletionQueue* fired = nullptr;
  rpma_sim::Status status = cq->cq->channel()->GetEvent(&fired);
  if (status != rpma_sim::Status::kOk) return ToRpmaError(status);
  cq->cq->Arm();
  return 0;
}

int rpma_cq_get_wc(struct rpma_cq* cq, int num_entries, struct ibv_wc* wc,
                   int* num_entries_got) {
  RPMA_API_PROLOGUE();
  if (cq == nullptr || num_entries < 1 || wc == nullptr) return RPMA_E_INVAL;
  if (num_entries > 1 && num_entries_got == nullptr) return RPMA_E_INVAL;
  int got = cq->cq->Poll(num_entries, wc);
  if (got == 0) return RPMA_E_NO_COMPLETION;
  if (num_entries_got != nullptr) *num_entries_got = got;
  return 0;
}
