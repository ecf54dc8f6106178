// conn_cfg.cc -- rpma_conn_cfg_*: queue sizes, timeout, shared channel and SRQ of a connection.
//
// Defaults are librpma's: timeout 1000 ms, cq 10, rcq 0, sq 10, rq 10, no shared channel,
// no SRQ. Setters accept any value except a negative timeout and a NULL SRQ. One thread at a
// time may use a configuration (one_thread.h): every accessor counts its call.
#include <librpma.h>

#include <new>

#include "api/api_prologue.h"
#include "api/conn_cfg.h"
#include "api/fault_point.h"
#include "api/types.h"

namespace {
constexpr char kWhat[] = "connection configuration";
}  // namespace

int rpma_conn_cfg_new(struct rpma_conn_cfg** cfg_ptr) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_NOMEM, "rpma_conn_cfg_new");
  if (cfg_ptr == nullptr) return RPMA_E_INVAL;
  auto* cfg = new (std::nothrow) rpma_conn_cfg;
  if (cfg == nullptr) return RPMA_E_NOMEM;
  *cfg_ptr = cfg;
  return 0;
}

int rpma_conn_cfg_delete(struct rpma_conn_cfg** cfg_ptr) {
  RPMA_API_PROLOGUE_ENDING(rpma_conn_cfg_delete(cfg_ptr));  // frees it whatever the result
  if (cfg_ptr == nullptr) return RPMA_E_INVAL;
  if (*cfg_ptr == nullptr) return 0;
  if (!MayEnd(**cfg_ptr, __func__, kWhat)) return RPMA_E_INVAL;
  delete *cfg_ptr;
  *cfg_ptr = nullptr;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_delete");
  return 0;
}

int rpma_conn_cfg_set_timeout(struct rpma_conn_cfg* cfg, int timeout_ms) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_set_timeout");
  if (cfg == nullptr || timeout_ms < 0) return RPMA_E_INVAL;
  ConnConfigAccess access(*cfg, __func__);
  cfg->config.timeout_ms = timeout_ms;
  return 0;
}

int rpma_conn_cfg_get_timeout(const struct rpma_conn_cfg* cfg, int* timeout_ms) {
  RPMA_API_PROLOGUE();
  if (cfg == nullptr || timeout_ms == nullptr) return RPMA_E_INVAL;
  ConnConfigAccess access(*cfg, __func__);
  *timeout_ms = cfg->config.timeout_ms;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_get_timeout");
  return 0;
}

// The uint32_t fields share one setter and one getter shape.
#define RPMA_CONN_CFG_SIZE_ACCESSORS(name)                                        \
  int rpma_conn_cfg_set_##name(struct rpma_conn_cfg* cfg, uint32_t name) {        \
    RPMA_API_PROLOGUE();                                                          \
    RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_set_" #name);                   \
    if (cfg == nullptr) return RPMA_E_INVAL;                                      \
    ConnConfigAccess access(*cfg, __func__);                                      \
    cfg->config.name = name;                                                      \
    return 0;                                                                     \
  }                                                                               \
  int rpma_conn_cfg_get_##name(const struct rpma_conn_cfg* cfg, uint32_t* name) { \
    RPMA_API_PROLOGUE();                                                          \
    if (cfg == nullptr || name == nullptr) return RPMA_E_INVAL;                   \
    ConnConfigAccess access(*cfg, __func__);                                      \
    *name = cfg->config.name;                                                     \
    RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_get_" #name);                   \
    return 0;                                                                     \
  }

RPMA_CONN_CFG_SIZE_ACCESSORS(cq_size)
RPMA_CONN_CFG_SIZE_ACCESSORS(rcq_size)
RPMA_CONN_CFG_SIZE_ACCESSORS(sq_size)
RPMA_CONN_CFG_SIZE_ACCESSORS(rq_size)

int rpma_conn_cfg_set_compl_channel(struct rpma_conn_cfg* cfg, bool shared) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_set_compl_channel");
  if (cfg == nullptr) return RPMA_E_INVAL;
  ConnConfigAccess access(*cfg, __func__);
  cfg->config.shared_channel = shared;
  return 0;
}

int rpma_conn_cfg_get_compl_channel(const struct rpma_conn_cfg* cfg, bool* shared) {
  RPMA_API_PROLOGUE();
  if (cfg == nullptr || shared == nullptr) return RPMA_E_INVAL;
  ConnConfigAccess access(*cfg, __func__);
  *shared = cfg->config.shared_channel;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_get_compl_channel");
  return 0;
}

int rpma_conn_cfg_set_srq(struct rpma_conn_cfg* cfg, struct rpma_srq* srq) {
  RPMA_API_PROLOGUE();
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_set_srq");
  if (cfg == nullptr || srq == nullptr) return RPMA_E_INVAL;
  ConnConfigAccess access(*cfg, __func__);
  cfg->srq = srq;
  return 0;
}

int rpma_conn_cfg_get_srq(const struct rpma_conn_cfg* cfg, struct rpma_srq** srq_ptr) {
  RPMA_API_PROLOGUE();
  if (cfg == nullptr || srq_ptr == nullptr) return RPMA_E_INVAL;
  ConnConfigAccess access(*cfg, __func__);
  *srq_ptr = cfg->srq;
  RPMA_FAULT_POINT(RPMA_E_INVAL, "rpma_conn_cfg_get_srq");
  return 0;
}
