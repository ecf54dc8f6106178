// bench_pair.h -- a connected client/server pair in one process, with registered buffers,
// for the benchmarks. Every call aborts with a message on an unexpected result: a benchmark
// that silently measures failures is worse than none.
#ifndef RPMA_SIM_BENCH_BENCH_PAIR_H_
#define RPMA_SIM_BENCH_BENCH_PAIR_H_

#include <librpma.h>
#include <stddef.h>

#include <vector>

class BenchPair {
 public:
  // Connects over 127.0.0.1 and registers `buffer_size` bytes on each side.
  explicit BenchPair(size_t buffer_size);
  ~BenchPair();

  BenchPair(const BenchPair&) = delete;
  BenchPair& operator=(const BenchPair&) = delete;

  // Post one operation from the client to the server's buffer.
  void Write(size_t size, bool signaled);
  void Read(size_t size, bool signaled);
  void Flush(size_t size, bool signaled);

  // Waits (busy polling) for one successful completion on the client's CQ.
  void WaitSendCompletion();

  // One message: the server posts a receive, the client sends, the server polls its
  // receive completion; the client's send completion is left to WaitSendCompletion when
  // `signaled`.
  void SendWithReceive(size_t size, bool signaled);

  // SendWithReceive(size, true) followed by WaitSendCompletion().
  void SendAndReceive(size_t size);

  // A plain memcpy between the same two buffers the operations use: the yardstick.
  void CopyLocally(size_t size);

  // The peer both sides share (the server's memory is its node's).
  rpma_peer* peer() const { return peer_; }

 private:
  void PollOne(rpma_cq* cq, ibv_wc_opcode expected);

  std::vector<char> client_buffer_, server_buffer_;
  rpma_peer* peer_ = nullptr;
  rpma_ep* ep_ = nullptr;
  rpma_conn* client_ = nullptr;
  rpma_conn* server_ = nullptr;
  rpma_mr_local* client_mr_ = nullptr;
  rpma_mr_local* server_mr_ = nullptr;
  rpma_mr_remote* remote_mr_ = nullptr;
  rpma_cq* client_cq_ = nullptr;
  rpma_cq* server_cq_ = nullptr;
};

#endif  // RPMA_SIM_BENCH_BENCH_PAIR_H_
