// send_batch.h -- holding a thread's frames back until it leaves its locks and its turn.
//
// While a SendBatch is open on a thread, FrameWire::Send there only queues the frame; when
// the outermost batch closes, each wire that queued one hands the stream everything it
// holds, several frames per system call as far as the stream takes them. The simulator
// opens one inside each queue pair's execution lock, so that no socket is written while it
// is held (the lock is given back first, then the batch closes), and one around each turn
// of reading a wire, so that the answers to the frames of one turn leave together.
//
// A batch never waits for anything; Close and Flush of a wire send what it holds at once.
#ifndef RPMA_SIM_TRANSPORT_SEND_BATCH_H_
#define RPMA_SIM_TRANSPORT_SEND_BATCH_H_

#include <memory>

namespace rpma_sim {

class FrameWire;

class SendBatch {
 public:
  // `turn_of`, if not null, is the wire whose turn of reading the batch covers: when the
  // batch closes, it also sends the frames that waited there for the next write
  // (FrameWire::Urgency::kWithNextWrite).
  explicit SendBatch(FrameWire* turn_of = nullptr) : turn_of_(turn_of) { ++counts_.depth; }
  ~SendBatch() {  // the outermost one sends what every wire of it holds
    if (turn_of_ != nullptr || counts_.held > 0) SendHeld();
    --counts_.depth;
  }

  SendBatch(const SendBatch&) = delete;
  SendBatch& operator=(const SendBatch&) = delete;

  // Sends now what the batch holds so far, if it is the outermost one (a turn of reading
  // that is about to wait for the stream: the answers so far need not wait for it).
  void SendHeld();

  // Whether a batch is open on the calling thread.
  static bool Open() { return counts_.depth > 0; }
  // `wire` holds frames for the end of the calling thread's batch (which must be open).
  static void Hold(FrameWire* wire);

 private:
  // The calling thread's batches (send_batch.cc keeps the wires). Trivially destructible,
  // so that no thread registers a destructor for it: a fork child would inherit the other
  // threads' registrations and never run them. Hidden: GCC would export an inline variable
  // from a shared library (as a unique symbol, which no version script keeps in).
  struct Counts {
    int depth;  // batches open, nested
    int held;   // wires holding frames, each once
  };
  __attribute__((visibility("hidden"))) static inline thread_local Counts counts_;

  FrameWire* const turn_of_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_SEND_BATCH_H_
