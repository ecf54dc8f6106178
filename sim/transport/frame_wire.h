// frame_wire.h -- frames carried over one ByteStream (a TCP socket or a shared-memory
// segment), on the progress engine.
//
// A wire has no thread of its own: the engine reads whatever arrived, frame by frame, and
// sends what the stream would not take at once (frame_wire_engine.cc); an application that
// polls its completions does both on its own thread as well. Each complete,
// validated frame goes to the wire's handler in order; a peer that sends garbage, a frame
// that is too large, or breaks the connection ends the wire (OnWireClosed says why) and
// nothing else; and Send never blocks the caller on the network, so callers may hold the
// simulator's locks. Frames queued together leave together: one write of the stream takes
// as many whole frames as it holds (up to 64), so a turn's answers, or the frames a
// SendBatch held back, cost one system call. (SendBatch, below, holds a thread's frames
// back until it leaves its locks.)
#ifndef RPMA_SIM_TRANSPORT_FRAME_WIRE_H_
#define RPMA_SIM_TRANSPORT_FRAME_WIRE_H_

#include <atomic>
#include <deque>
#include <memory>
#include <string>

#include "sim/common/mutex.h"
#include "sim/transport/byte_stream.h"
#include "sim/transport/frame.h"
#include "sim/transport/frame_payload.h"

namespace rpma_sim {

// What a wire tells its owner. Called on the engine's thread, or on an application's thread
// that reads the stream (DeliverArrived: its frames and, if it reads the end, OnWireClosed),
// never with a lock of the wire's held; one call at a time either way.
class WireHandler {
 public:
  virtual ~WireHandler() = default;
  virtual void OnFrame(Frame frame) = 0;
  // The wire ended; `reason` says how. Called exactly once, after the last OnFrame.
  virtual void OnWireClosed(const std::string& reason) = 0;
};

// The most frames one write hands the stream (two parts each: header and body).
constexpr size_t kFramesPerWrite = 64;

// The key under which DRD is told that a frame's sending happens before its handling.
extern char g_frames_handed_over;

class FrameWire : public std::enable_shared_from_this<FrameWire> {
 public:
  explicit FrameWire(std::unique_ptr<ByteStream> stream);
  ~FrameWire();

  FrameWire(const FrameWire&) = delete;
  FrameWire& operator=(const FrameWire&) = delete;

  // Starts reading; frames go to `handler`, kept alive until OnWireClosed returns. The
  // first wait begins on the calling thread (no wake-up of the engine's), which must hold
  // none of the simulator's locks; frames are handled on the engine from then on.
  void Start(std::shared_ptr<WireHandler> handler);
  // The same for a caller that holds locks: the engine takes `handler` (not under the
  // caller's locks) and begins the first wait.
  void StartOnEngine(std::shared_ptr<WireHandler> handler);

  // Reads what arrived and delivers the frames it completes, on the calling thread, unless
  // the engine is reading right now; never waits long (at most 16 frames from the stream
  // and those read ahead with them, 4 MiB of bodies).
  // A frame still arriving is read as far as it came, and the engine or the next call goes
  // on with it. The end of the stream, or a malformed frame, ends the wire here
  // (OnWireClosed on the calling thread).
  void DeliverArrived();

  // Hands the stream what it takes now of the frames queued for sending, on the calling
  // thread, unless another thread is sending right now; never waits. (The engine does it
  // when the stream drains; a polling application gets there first.)
  void SendQueued();

  // How soon a frame must leave.
  enum class Urgency {
    // At once, or, while a SendBatch is open on the calling thread, when the batch closes.
    kNow,
    // With the wire's next write: when a frame is sent at once, a turn of reading this
    // wire ends (the engine's or a poller's), a poller sends (SendQueued), the wire is
    // closed or flushed, or 64 frames wait. For a frame sent while the peer has earlier
    // ones to answer: the turn that reads an answer sends it. Only where writes are
    // system calls (ByteStream::WritesAreSystemCalls); elsewhere as kNow.
    kWithNextWrite,
  };

  // Queues a frame for sending; false once the wire is closing. Its body is `body`, then
  // `payload`'s bytes if there is one (read each time the stream takes more of them; the
  // wire keeps it until it sent them all, or dropped them). It leaves as `urgency` says.
  bool Send(FrameType type, std::vector<uint8_t> body,
            std::shared_ptr<FramePayload> payload = nullptr, Urgency urgency = Urgency::kNow);

  // Folds the body of a frame that follows `queued` into it, when one frame can say what
  // both say (a cumulative answer): true if it did (`queued` may change size).
  using MergeBodies = bool (*)(std::vector<uint8_t>* queued, const std::vector<uint8_t>& next);
  // As Send (kNow, no payload), except that while the last frame queued was also sent with
  // `merge` and none of it has left yet, `merge` may fold this one into it: then no frame
  // is added. The frames of one turn or one batch (SendBatch) are queued before any leaves,
  // so answers given together go as one frame.
  bool SendMerging(FrameType type, std::vector<uint8_t> body, MergeBodies merge);

  // Hands the stream what it takes now of the queued frames, unless the engine is waiting
  // to send them (the stream was full); what it does not take leaves when it drains. Never
  // waits. (A closing SendBatch calls it.)
  void Push();

  // Frames queued and not yet handed to the kernel whole: what the peer has not read. One
  // load, no lock (asked on every arriving request).
  size_t queued_frames() const { return queued_frames_.load(std::memory_order_relaxed); }
  // The body bytes of those frames (a frame partly handed over counts whole; one being
  // handed over right now may already not count).
  size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }

  // Sends what is queued, then closes the connection. The handler still gets OnWireClosed.
  void Close();

  // Closes at once, dropping what is queued.
  void Abort();

  // The peer sent something it must not have (`what`, for the log): logs it as an error
  // naming the peer, and closes at once. What is queued (the answers to the requests
  // before the bad one) goes first, as far as the socket takes it now; nothing read after
  // the bad frame is handed over. The one reaction to a malformed message, on every wire.
  void AbortMalformed(const std::string& what);
  // As AbortMalformed, without the log line: for the other wire of a connection whose
  // malformed message the first one logs (a connection's shared-memory rings and its TCP
  // socket carry one stream of frames between them).
  void AbortAfterMalformed();

  // Waits (at most `timeout_ms`) until everything queued so far was handed to the kernel,
  // so that a goodbye is not lost when the process exits right after (when a polling
  // application sent the last of it: until the engine saw the stream take more). Must not
  // be called with the simulator's locks held. False if it timed out.
  bool Flush(int timeout_ms);

  const std::string& peer() const { return stream_->peer(); }
  ByteStream* stream() const { return stream_.get(); }

 private:
  // A frame on its way out, and how many of its bytes (header included) already left.
  struct Outgoing {
    FrameType type;
    std::vector<uint8_t> body;
    std::shared_ptr<FramePayload> payload;  // the rest of the body, or null
    size_t body_size = 0;                   // body's and payload's bytes
    size_t sent = 0;
    MergeBodies merge = nullptr;  // how a later frame may fold into it (SendMerging), or null
  };

  // Send's and SendMerging's work.
  bool Queue(FrameType type, std::vector<uint8_t> body, std::shared_ptr<FramePayload> payload,
             Urgency urgency, MergeBodies merge);
  // Folds `body` into the last frame queued if it may (SendMerging).
  bool MergedLocked(FrameType type, const std::vector<uint8_t>& body, MergeBodies merge)
      REQUIRES(mutex_);

  // frame_wire_engine.cc: reading and writing, on the progress engine's thread or on a
  // polling application's.
  enum class ReadResult { kFrame, kWouldBlock, kPaused, kEnd };
  // Takes `handler` and waits until the stream is readable, then OnReadable (on the
  // engine). Only once, from Start or StartOnEngine.
  void BeginReading(std::shared_ptr<WireHandler> handler);
  void OnReadable();
  // Reads what arrived into incoming_ until a frame is whole (kFrame), nothing more is
  // there (kWouldBlock), `budget` bytes of bodies were read (kPaused; it counts them down),
  // or the stream ended or sent a malformed header (kEnd, `reason`).
  // Whether a read may take more than the frame being assembled (kYes: whoever reads hands
  // over whatever whole frames it read ahead before it stops), or takes only what was read
  // ahead (kBufferedOnly: a poller past its frames from the stream).
  enum class ReadAhead { kYes, kBufferedOnly };
  ReadResult ReadSome(ReadAhead ahead, size_t* budget, std::string* reason) REQUIRES(read_mutex_);
  // Takes up to `size` bytes of the stream for the frame being read, as TryRead does: from
  // what was read ahead first; a piece at least as large as the read-ahead straight into
  // `data`; anything smaller through the read-ahead.
  ssize_t Pull(ReadAhead ahead, uint8_t* data, size_t size) REQUIRES(read_mutex_);
  // Gives the whole frame in incoming_ to the handler.
  void HandOver() REQUIRES(read_mutex_);
  // Whether the next read is a system call: nothing is read ahead, on a stream whose reads
  // are system calls (it reads ahead).
  bool NextReadIsSystemCall() const REQUIRES(read_mutex_) {
    return ahead_begin_ == ahead_end_ && stream_->ReadAheadBytes() > 0;
  }
  // The stream ended: the handler, taken so that nothing reads on (null if it was taken).
  std::shared_ptr<WireHandler> TakeHandlerLocked() REQUIRES(read_mutex_);
  // ... then, without read_mutex_: the wire is aborted and `handler` told `reason`.
  void EndReading(const std::shared_ptr<WireHandler>& handler, const std::string& reason)
      EXCLUDES(read_mutex_);
  // Waits (on the engine) until the stream takes bytes again, then OnWritable.
  void ArmWrite();
  void OnWritable();

  // Sends what the stream takes now of the first `count` queued frames, none of which has
  // a payload, in one write. False on a connection error.
  bool WriteFrames(size_t count) REQUIRES(mutex_);
  // Sends what the stream takes now of the rest of `out`, which has a payload. False on a
  // connection error.
  bool WriteWithPayload(Outgoing* out);
  // The same, with out->payload's bytes as `payload_count` parts: kWritten (as far as the
  // stream takes them), kBroken on a connection error, or kUnreadable if the next of those
  // bytes cannot be read (the application unmapped them).
  enum class PartsWritten { kWritten, kBroken, kUnreadable };
  PartsWritten WriteParts(Outgoing* out, const iovec* payload, int payload_count);
  // Sends the queued frames in order as far as the stream takes them: all of them
  // (kDrained), until it is full (kFull), or until it broke (kBroken).
  enum class WriteResult { kDrained, kFull, kBroken };
  WriteResult WriteQueuedLocked() REQUIRES(mutex_);
  // The stream broke, or the wire was aborted: nothing more goes out, what is queued is
  // forgotten. The caller then shuts the stream down (after unlocking), so that the reader
  // sees the end and tells the handler (a corrupt ring does not end the stream by itself, as
  // a broken socket does).
  void BreakLocked() REQUIRES(mutex_);
  // Everything queued was sent (or dropped): a closing wire shuts its stream down. Returns
  // whether the caller must call stream_->Shutdown() (after unlocking).
  bool FinishWritingLocked() REQUIRES(mutex_);
  // Push's work: writes the queue unless the engine waits to (writing_) or the writer is
  // done; what the stream does not take waits for the engine. Returns whether the caller
  // must call stream_->Shutdown() (after unlocking): the stream broke, or a closing wire
  // sent the last of its queue.
  bool PushLocked() REQUIRES(mutex_);

  // A frame being read, as far as it arrived.
  struct Incoming {
    uint8_t header[kFrameHeaderSize];
    size_t header_got = 0;
    uint32_t length = 0;
    Frame frame;
    size_t body_got = 0;
  };

  std::unique_ptr<ByteStream> stream_;

  // Held while a frame is read and handled, so frames are handled one at a time, in order,
  // whichever thread takes them.
  Mutex read_mutex_;
  std::shared_ptr<WireHandler> handler_ GUARDED_BY(read_mutex_);  // reset when reading ends
  Incoming incoming_ GUARDED_BY(read_mutex_);
  // What a read took beyond the frame being assembled (ByteStream::ReadAheadBytes), not
  // handed over yet: [ahead_begin_, ahead_end_) of ahead_.
  std::unique_ptr<uint8_t[]> ahead_ GUARDED_BY(read_mutex_);
  size_t ahead_begin_ GUARDED_BY(read_mutex_) = 0;
  size_t ahead_end_ GUARDED_BY(read_mutex_) = 0;
  uint64_t polls_seen_ = 0;  // the engine's thread only
  // How often DeliverArrived read something: while an application polls and reads, the
  // engine leaves the stream to it instead of spinning beside it for the same cores.
  std::atomic<uint64_t> polls_{0};
  // The engine is waiting for read_mutex_: a polling application leaves it the stream
  // rather than taking the lock again and again before the engine's thread gets to run.
  std::atomic<bool> engine_waiting_{false};

  Mutex mutex_ ACQUIRED_AFTER(read_mutex_);
  std::deque<Outgoing> outbound_ GUARDED_BY(mutex_);
  std::atomic<size_t> queued_frames_{0};  // outbound_.size(), changed with it
  std::atomic<size_t> queued_bytes_{0};   // their bodies' sizes, changed with it
  bool closing_ GUARDED_BY(mutex_) = false;
  // The engine waits to send what is queued (while something is, except frames held for a
  // SendBatch that has not closed yet).
  bool writing_ GUARDED_BY(mutex_) = false;
  bool writer_done_ GUARDED_BY(mutex_) = false;
  CondVar drained_;  // with mutex_
  std::atomic<bool> aborted_{false};
  // AbortMalformed ran: frames read ahead after the bad one are not handed over.
  std::atomic<bool> malformed_{false};
};

// SendBatch: holding a thread's frames back until it leaves its locks and its turn.
//
// While a SendBatch is open on a thread, FrameWire::Send there only queues the frame; when
// the outermost batch closes, each wire that queued one hands the stream everything it
// holds, several frames per system call as far as the stream takes them. The simulator
// opens one inside each queue pair's execution lock, so that no socket is written while it
// is held (the lock is given back first, then the batch closes), and one around each turn
// of reading a wire, so that the answers to the frames of one turn leave together.
//
// A batch never waits for anything; Close and Flush of a wire send what it holds at once.
class SendBatch {
 public:
  // `turn_of`, if not null, is the wire whose turn of reading the batch covers: when the
  // batch closes, it also sends the frames that waited there for the next write
  // (FrameWire::Urgency::kWithNextWrite).
  explicit SendBatch(FrameWire* turn_of = nullptr);
  ~SendBatch();  // the outermost one sends what every wire of it holds

  SendBatch(const SendBatch&) = delete;
  SendBatch& operator=(const SendBatch&) = delete;

  // Sends now what the batch holds so far, if it is the outermost one (a turn of reading
  // that is about to wait for the stream: the answers so far need not wait for it).
  void SendHeld();

  // Whether a batch is open on the calling thread.
  static bool Open();
  // `wire` holds frames for the end of the calling thread's batch (which must be open).
  static void Hold(FrameWire* wire);

 private:
  FrameWire* const turn_of_;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_FRAME_WIRE_H_
