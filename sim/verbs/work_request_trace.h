// work_request_trace.h -- what a queue pair writes to the trace (sim/common/trace.h).
//
// Each connection is a track named after it ("client conn 1 (qp 5)"); each work request is
// a slice on it from post to completion, named after its opcode, with its length, status and
// ordinal (a flush stands out in yellow, a failed request in red); connection events and
// fault firings are instants on it. A queue pair keeps several requests under way, and a
// viewer draws only slices that nest, so a slice that would overlap the one before it takes
// the next track of its connection ("... sends +1"): the fewest tracks that hold them all,
// chosen as each request completes. Receives have tracks of their own ("... receives").
#ifndef RPMA_SIM_VERBS_WORK_REQUEST_TRACE_H_
#define RPMA_SIM_VERBS_WORK_REQUEST_TRACE_H_

#include <infiniband/verbs.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "sim/verbs/connection_tag.h"
#include "sim/verbs/receive_queue.h"
#include "sim/verbs/send_request.h"

namespace rpma_sim {

class WorkRequestTrace {
 public:
  // The tracks of a queue pair: its number times kTracksPerQueuePair, then its send tracks,
  // then its receive tracks (kLanes each; past that, slices share the last one).
  static constexpr uint64_t kLanes = 128;
  static constexpr uint64_t kTracksPerQueuePair = 2 * kLanes;
  static uint64_t ConnectionTrack(uint32_t qp_num) { return qp_num * kTracksPerQueuePair; }

  // Names the queue pair's tracks after the connection it now belongs to.
  static void NameConnection(uint32_t qp_num, const ConnectionTag& tag);

  // An instant on the connection's track (a connection event, a fault firing).
  static void Instant(uint32_t qp_num, const char* category, const std::string& name,
                      const std::string& args);

  // A send-side work request (the `sequence`th of the queue pair) completed with `status`.
  // Requires the queue pair's execution lock, as do the others below.
  void Sent(uint32_t qp_num, const ConnectionTag& tag, const SendRequest& request,
            uint64_t sequence, ibv_wc_status status);

  // A receive completed with `status` (`opcode` and `byte_len` as its completion has them).
  void Received(uint32_t qp_num, const ConnectionTag& tag, const ReceiveRequest& request,
                ibv_wc_status status, ibv_wc_opcode opcode, uint32_t byte_len);

  static const char* StatusName(ibv_wc_status status);

 private:
  // The first of `ends` (each track's last slice's end) free at `start`; records `end`.
  // *added says the track is new to this queue pair (to be named).
  static uint64_t Lane(std::vector<uint64_t>* ends, uint64_t start, uint64_t end, bool* added);
  static std::string Label(uint32_t qp_num, const ConnectionTag& tag);

  std::vector<uint64_t> send_ends_;
  std::vector<uint64_t> receive_ends_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_WORK_REQUEST_TRACE_H_
