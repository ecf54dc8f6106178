// event_channel.h -- rdma_event_channel: connection-manager events behind a pollable fd.
//
// An endpoint has one (connection requests arrive there); every connection gets its own,
// as librpma migrates each CM id to a fresh channel.
#ifndef RPMA_SIM_CM_EVENT_CHANNEL_H_
#define RPMA_SIM_CM_EVENT_CHANNEL_H_

#include <stdint.h>

#include <deque>
#include <memory>
#include <vector>

#include "sim/common/event_fd.h"
#include "sim/common/mutex.h"
#include "sim/common/spin_budget.h"
#include "sim/common/status.h"

namespace rpma_sim {

class CmId;

enum class CmEventType {
  kConnectRequest,  // RDMA_CM_EVENT_CONNECT_REQUEST
  kEstablished,     // RDMA_CM_EVENT_ESTABLISHED
  kRejected,        // RDMA_CM_EVENT_REJECTED
  kUnreachable,     // RDMA_CM_EVENT_UNREACHABLE
  kDisconnected,    // RDMA_CM_EVENT_DISCONNECTED
  kConnectError,    // RDMA_CM_EVENT_CONNECT_ERROR: the connection is lost
};

struct CmEvent {
  CmEventType type;
  std::shared_ptr<CmId> id;           // the incoming id of a connect request
  std::vector<uint8_t> private_data;  // the other side's private data, if any
};

class EventChannel {
 public:
  int fd() const { return event_fd_.fd(); }

  void Push(CmEvent event);

  // Takes the oldest event. Blocks unless the fd is non-blocking; then kNoEvent.
  Status Next(CmEvent* event);

  // Takes every pending event without waiting, and leaves the fd not readable unless an
  // event came since.
  std::deque<CmEvent> TakeAll();

  // How many events wait to be taken.
  size_t pending();

 private:
  // How long a taker spins before it sleeps, shared by every channel of the process
  // (spin_budget.h): a connection's channel is new, and its ESTABLISHED comes about as late
  // as the last one's did.
  static SpinBudget& CmEventSpin();

  EventFd event_fd_{&CmEventSpin()};
  Mutex mutex_;
  std::deque<CmEvent> events_ GUARDED_BY(mutex_);
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_CM_EVENT_CHANNEL_H_
