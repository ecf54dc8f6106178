// conn_cfg.h -- the connection configuration a request is built with (defaults for NULL).
#ifndef RPMA_SIM_API_CONN_CFG_H_
#define RPMA_SIM_API_CONN_CFG_H_

#include "api/types.h"

// One call's use of a configuration (one thread at a time may use one: one_thread.h):
// counted, and under the configuration's lock.
class SCOPED_CAPABILITY ConnConfigAccess {
 public:
  ConnConfigAccess(const rpma_conn_cfg& cfg, const char* call) ACQUIRE(cfg.mutex)
      : counted_(cfg, call, "connection configuration", Sharing::kOneThread), lock_(&cfg.mutex) {}
  ~ConnConfigAccess() RELEASE() {}

 private:
  CallOn counted_;
  rpma_sim::MutexLock lock_;
};

// The configuration with its SRQ resolved (the cfg only names the SRQ, as librpma's does),
// read for `call`.
inline rpma_sim::ConnectionConfig ConnConfigOrDefault(const struct rpma_conn_cfg* cfg,
                                                      const char* call) {
  if (cfg == nullptr) return rpma_sim::ConnectionConfig();
  ConnConfigAccess access(*cfg, call);
  rpma_sim::ConnectionConfig config = cfg->config;
  if (cfg->srq != nullptr) config.srq = cfg->srq->srq;
  return config;
}

// The SRQ `cfg` names (NULL for none), read for `call`.
inline struct rpma_srq* ConnConfigSrq(const struct rpma_conn_cfg* cfg, const char* call) {
  if (cfg == nullptr) return nullptr;
  ConnConfigAccess access(*cfg, call);
  return cfg->srq;
}

#endif  // RPMA_SIM_API_CONN_CFG_H_
