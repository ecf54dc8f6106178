// types.h -- the layouts of librpma's opaque objects in rpma-sim.
//
// Each object is a thin handle on simulator objects plus the few values librpma itself keeps
// (usage bits, private-data copies, the direct-write-to-pmem flag). Only api/ sees these.
// Those on simulator state remember the process that made them (inherited.h).
#ifndef RPMA_SIM_API_TYPES_H_
#define RPMA_SIM_API_TYPES_H_

#include <librpma.h>

#include <atomic>
#include <memory>
#include <vector>

#include "api/inherited.h"
#include "api/one_thread.h"
#include "sim/cm/connection.h"
#include "sim/cm/connection_request.h"
#include "sim/cm/listener.h"
#include "sim/common/mutex.h"
#include "sim/verbs/completion_queue.h"
#include "sim/verbs/connection_queues.h"
#include "sim/verbs/memory_region.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/shared_receive_queue.h"

struct rpma_peer : ProcessOwned {
  std::shared_ptr<rpma_sim::ProtectionDomain> pd;
};

// One thread at a time may use a configuration (one_thread.h); its fields are atomic or
// under its lock, so that a program that breaks that gets a warning, not a data race.
struct rpma_peer_cfg : CountedCalls {
  std::atomic<bool> direct_write_to_pmem{false};
};

struct rpma_mr_local : ProcessOwned {
  std::shared_ptr<rpma_sim::ProtectionDomain> pd;
  std::shared_ptr<rpma_sim::MemoryRegion> region;
  int usage;
};

struct rpma_mr_remote {
  uint64_t raddr;
  uint64_t size;
  uint32_t rkey;
  int usage;
};

struct rpma_conn_cfg : CountedCalls {
  mutable rpma_sim::Mutex mutex;
  // Its srq stays empty (ConnConfigOrDefault).
  rpma_sim::ConnectionConfig config GUARDED_BY(mutex);
  struct rpma_srq* srq GUARDED_BY(mutex) = nullptr;
};

struct rpma_srq_cfg {
  uint32_t rq_size = 20;
  uint32_t rcq_size = 20;
};

// A completion queue as librpma hands it out: the CQ and whether its channel is shared.
struct rpma_cq : ProcessOwned {
  std::shared_ptr<rpma_sim::CompletionQueue> cq;
  bool shared_channel = false;
  // The connection whose CQ (or receive CQ) it is, or null (an SRQ's): a wait on it counts
  // as a call on the connection, which may not be deleted meanwhile (one_thread.h).
  const CountedCalls* connection = nullptr;
};

struct rpma_srq : ProcessOwned {
  rpma_peer* peer;
  std::shared_ptr<rpma_sim::SharedReceiveQueue> srq;
  std::unique_ptr<rpma_cq> rcq;  // nullptr when the SRQ has no receive CQ
};

struct rpma_ep : ProcessOwned, CountedCalls {
  rpma_peer* peer;
  std::shared_ptr<rpma_sim::Listener> listener;
};

struct rpma_conn_req : ProcessOwned, CountedCalls {
  rpma_peer* peer;
  std::unique_ptr<rpma_sim::ConnectionRequest> request;
  struct rpma_conn_private_data data = {nullptr, 0};  // the client's data (incoming only)
};

struct rpma_conn : ProcessOwned, CountedCalls {
  std::unique_ptr<rpma_sim::Connection> connection;
  rpma_cq cq;
  std::unique_ptr<rpma_cq> rcq;       // nullptr without a connection RCQ
  std::vector<uint8_t> private_data;  // the other side's private data
  bool has_private_data = false;
  bool direct_write_to_pmem = false;
};

// Whether a work request cannot be posted here: its connection or its local region (if
// any) is this process's parent's (inherited.h; logged with `call`).
inline bool InheritedPost(const char* call, const rpma_conn& conn, const rpma_mr_local* local) {
  return Inherited(conn, call, "connection") ||
         (local != nullptr && Inherited(*local, call, "registered memory"));
}

#endif  // RPMA_SIM_API_TYPES_H_
