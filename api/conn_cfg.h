// conn_cfg.h -- the connection configuration a request is built with (defaults for NULL).
#ifndef RPMA_SIM_API_CONN_CFG_H_
#define RPMA_SIM_API_CONN_CFG_H_

#include "api/types.h"

// The configuration with its SRQ resolved (the cfg only names the SRQ, as librpma's does),
// read for `call` (one thread at a time may use a configuration: one_thread.h).
inline rpma_sim::ConnectionConfig ConnConfigOrDefault(const struct rpma_conn_cfg* cfg,
                                                      const char* call) {
  if (cfg == nullptr) return rpma_sim::ConnectionConfig();
  CallOn counted(*cfg, call, "connection configuration", Sharing::kOneThread);
  std::lock_guard<std::mutex> lock(cfg->mutex);
  rpma_sim::ConnectionConfig config = cfg->config;
  if (cfg->srq != nullptr) config.srq = cfg->srq->srq;
  return config;
}

// The SRQ `cfg` names (NULL for none), read for `call`.
inline struct rpma_srq* ConnConfigSrq(const struct rpma_conn_cfg* cfg, const char* call) {
  if (cfg == nullptr) return nullptr;
  CallOn counted(*cfg, call, "connection configuration", Sharing::kOneThread);
  std::lock_guard<std::mutex> lock(cfg->mutex);
  return cfg->srq;
}

#endif  // RPMA_SIM_API_CONN_CFG_H_
