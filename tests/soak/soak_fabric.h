// soak_fabric.h -- the soak's two nodes in one process, over the public API only: a server
// peer listening on 127.0.0.1:<free port> with its registered regions, a client peer with its
// own, the one connection between them (made, torn down and made again), and bounded waits
// for connection events and completions. RPMA_SIM_TRANSPORT (set before the first call)
// decides whether the connection is in process, over shm or over tcp.
#ifndef RPMA_SIM_TESTS_SOAK_SOAK_FABRIC_H_
#define RPMA_SIM_TESTS_SOAK_SOAK_FABRIC_H_

#include <librpma.h>
#include <rpma_sim.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace soak {

// The longest any wait lasts for something the simulator should deliver promptly; only a
// safety net (a broken simulator fails the soak after this long instead of hanging it).
constexpr int kSafetyTimeoutMs = 20000;

// Prints "soak: FAILED: <message>" with the context set by SetFailureContext and exits 1.
[[noreturn]] void Fatal(const char* format, ...) __attribute__((format(printf, 1, 2)));

// What Fatal prints besides its message: the seed and the operation index.
void SetFailureContext(uint64_t seed, const uint64_t* operation_index);

// Fatal unless ret is 0.
void Check(int ret, const char* call);

// Memory registered on one peer: page-aligned, starting `skew` bytes into its allocation.
struct Region {
  uint8_t* bytes = nullptr;
  size_t size = 0;
  rpma_mr_local* mr = nullptr;
  rpma_mr_remote* remote = nullptr;  // the client's view, for the server's target regions
  void* allocation = nullptr;
};

// The sizes of a connection's queues.
struct QueueSizes {
  uint32_t sq = 10;  // the client's send queue
  uint32_t rq = 10;  // the server's receive queue
};

class SoakFabric {
 public:
  static constexpr size_t kTargetASize = 64 * 1024;
  static constexpr size_t kTargetBSize = 8 * 1024 - 40;  // starts 24 bytes into a line
  static constexpr size_t kRecvSlot = 512;               // the longest message
  static constexpr size_t kMaxRecvSlots = 64;
  static constexpr size_t kSourceSize = 64 * 1024;
  static constexpr size_t kReadSlot = 4096;  // the longest read
  static constexpr size_t kMaxReadSlots = 64;

  SoakFabric() = default;
  SoakFabric(const SoakFabric&) = delete;
  SoakFabric& operator=(const SoakFabric&) = delete;
  ~SoakFabric();

  // Both peers, the server armed for power failures and listening, every region registered
  // (the source filled from `fill_seed`, the targets with their own pattern).
  void Open(uint64_t fill_seed);

  // A new connection: the client's request with `sizes`, the server's accept, ESTABLISHED on
  // both sides, and the client applying direct write to pmem (the server's memory is
  // persistent), as librpma's example 05 does.
  void Connect(const QueueSizes& sizes);

  // Waits for the next event of `conn` (Fatal after the safety timeout).
  rpma_conn_event NextEvent(rpma_conn* conn);

  // Deletes both connections (whatever state they are in).
  void DeleteConnections();

  // Both connections, disconnected and deleted, the endpoint shut down, the regions
  // deregistered, the peers deleted.
  void Close();

  rpma_peer* server_peer() const { return server_peer_; }
  rpma_conn* client() const { return client_; }
  rpma_conn* server() const { return server_; }
  rpma_cq* client_cq() const { return client_cq_; }
  rpma_cq* server_cq() const { return server_cq_; }
  uint32_t client_qp_num() const { return client_qp_num_; }
  uint32_t server_qp_num() const { return server_qp_num_; }
  const std::string& port() const { return port_; }

  Region target_a;  // server: written, read, flushed
  Region target_b;  // server: the same, at an address not aligned to a line
  Region recv;      // server: receive buffers
  Region source;    // client: what writes and sends carry
  Region read_dst;  // client: where reads land, one slot per outstanding read

 private:
  void Register(rpma_peer* peer, Region* region, size_t size, size_t skew, int usage);
  void Deregister(Region* region);

  rpma_peer* server_peer_ = nullptr;
  rpma_peer* client_peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  std::string port_;
  rpma_conn* client_ = nullptr;
  rpma_conn* server_ = nullptr;
  rpma_cq* client_cq_ = nullptr;
  rpma_cq* server_cq_ = nullptr;
  uint32_t client_qp_num_ = 0;
  uint32_t server_qp_num_ = 0;
};

}  // namespace soak

#endif  // RPMA_SIM_TESTS_SOAK_SOAK_FABRIC_H_
