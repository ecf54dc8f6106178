// conn_cfg.h -- the connection configuration librpma uses when the caller passes NULL.
#ifndef RPMA_SIM_API_CONN_CFG_H_
#define RPMA_SIM_API_CONN_CFG_H_

#include "api/types.h"

inline const rpma_sim::ConnectionConfig& ConnConfigOrDefault(const struct rpma_conn_cfg* cfg) {
  static const rpma_sim::ConnectionConfig defaults;
  return cfg != nullptr ? cfg->config : defaults;
}

#endif  // RPMA_SIM_API_CONN_CFG_H_
