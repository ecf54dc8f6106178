// conn_cfg.h -- the connection configuration a request is built with (defaults for NULL).
#ifndef RPMA_SIM_API_CONN_CFG_H_
#define RPMA_SIM_API_CONN_CFG_H_

#include "api/types.h"

// The configuration with its SRQ resolved (the cfg only names the SRQ, as librpma's does).
inline rpma_sim::ConnectionConfig ConnConfigOrDefault(const struct rpma_conn_cfg* cfg) {
  if (cfg == nullptr) return rpma_sim::ConnectionConfig();
  rpma_sim::ConnectionConfig config = cfg->config;
  if (cfg->srq != nullptr) config.srq = cfg->srq->srq;
  return config;
}

#endif  // RPMA_SIM_API_CONN_CFG_H_
