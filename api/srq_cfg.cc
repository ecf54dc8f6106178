// srq_cfg.cc -- rpma_srq_cfg_*: sizes of a shared receive queue and its receive CQ.
//
// Defaults are those of librpma's code, 20 and 20 (the man page says 100).
#include <librpma.h>

#include <new>

#include "api/api_prologue.h"
#include "api/fault_point.h"
#include "api/types.h"

int rpma_srq_cfg_new(struct rpma_srq_cfg** cfg_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_cfg_new");
  if (cfg_ptr == nullptr) return RPMA_E_INVAL;
  RPMA_FAULT_POINT(RPMA_E_NOMEM, "rpma_srq_cfg_new");
  auto* cfg = new (std::nothrow) rpma_srq_cfg;
  if (cfg == nullptr) return RPMA_E_NOMEM;
  *cfg_ptr = cfg;
  return 0;
}

int rpma_srq_cfg_delete(struct rpma_srq_cfg** cfg_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_srq_cfg_delete(cfg_ptr));  // frees it whatever the result
  if (cfg_ptr == nullptr) return RPMA_E_INVAL;
  if (*cfg_ptr == nullptr) return 0;
  delete *cfg_ptr;
  *cfg_ptr = nullptr;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_cfg_delete");
  return 0;
}

int rpma_srq_cfg_set_rq_size(struct rpma_srq_cfg* cfg, uint32_t rq_size) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_cfg_set_rq_size");
  if (cfg == nullptr) return RPMA_E_INVAL;
  cfg->rq_size = rq_size;
  return 0;
}

int rpma_srq_cfg_get_rq_size(const struct rpma_srq_cfg* cfg, uint32_t* rq_size) {
  RPMA_API_PROLOGUE();
  if (cfg == nullptr || rq_size == nullptr) return RPMA_E_INVAL;
  *rq_size = cfg->rq_size;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_cfg_get_rq_size");
  return 0;
}

int rpma_srq_cfg_set_rcq_size(struct rpma_srq_cfg* cfg, uint32_t rcq_size) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_cfg_set_rcq_size");
  if (cfg == nullptr) return RPMA_E_INVAL;
  cfg->rcq_size = rcq_size;
  return 0;
}

int rpma_srq_cfg_get_rcq_size(const struct rpma_srq_cfg* cfg, uint32_t* rcq_size) {
  RPMA_API_PROLOGUE();
  if (cfg == nullptr || rcq_size == nullptr) return RPMA_E_INVAL;
  *rcq_size = cfg->rcq_size;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_srq_cfg_get_rcq_size");
  return 0;
}
