// byte_stream.h -- an ordered, reliable byte stream between two processes: a TCP socket
// (socket_stream.h) or a pair of rings in a shared-memory segment (shm_stream.h).
//
// A FrameWire carries frames over any ByteStream on the progress engine; the stream only
// moves bytes.
#ifndef RPMA_SIM_TRANSPORT_BYTE_STREAM_H_
#define RPMA_SIM_TRANSPORT_BYTE_STREAM_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <functional>
#include <string>

namespace rpma_sim {

class ByteStream {
 public:
  virtual ~ByteStream() = default;

  // Writes what fits of `parts` now, without waiting. Returns the bytes taken (0 when the
  // stream is full), or -1 when it is broken. One writer at a time.
  virtual ssize_t Write(const iovec* parts, int count) = 0;

  // Write, where some parts are the application's registered memory (a payload read in
  // place), which it may have unmapped under a request it posted. Those are read as a device
  // reads them (guarded_copy.h); when the next bytes to take cannot be read at all, it
  // returns -1 with errno EFAULT, having taken nothing of them, and the stream goes on
  // (a socket's sendmsg does the same by itself).
  virtual ssize_t WriteFromApplication(const iovec* parts, int count) {
    return Write(parts, count);
  }

  // Takes what arrived, up to `size` bytes: the bytes taken, 0 if nothing is there yet, -1
  // at the end or on an error. One reader at a time, on any thread (the engine's, or an
  // application's that polls: FrameWire::DeliverArrived).
  virtual ssize_t TryRead(uint8_t* data, size_t size) = 0;

  // How many bytes a reader may take in one TryRead beyond the frame it assembles, to hand
  // several small frames over per call: a stream whose reads are system calls says how
  // many, one whose reads are copies from memory says 0 (a read-ahead would copy twice).
  virtual size_t ReadAheadBytes() const { return 0; }

  // Whether each Write is a system call (worth saving by writing several frames at once),
  // or a copy into memory.
  virtual bool WritesAreSystemCalls() const { return false; }

  // The progress engine waits for the stream, which has no thread of its own. A wait calls
  // `ready` on the engine's thread once the stream is readable (or ended, or broken), or
  // writable. The first wait may be begun on any thread that holds none of the simulator's
  // locks (FrameWire::Start); every later one is begun on the engine's, after the one
  // before ended there.
  virtual void AsyncWaitReadable(std::function<void()> ready) = 0;
  virtual void AsyncWaitWritable(std::function<void()> ready) = 0;
  // The engine waits to read nothing on the stream for a while (an application reads it):
  // what arrives need not wake the engine. The next wait watches it again. On the engine's
  // thread only, with no wait to read begun.
  virtual void Unwatch() {}

  // Ends the stream both ways after the bytes already written: the peer reads them, then
  // the end. A wait of this side returns.
  virtual void Shutdown() = 0;

  // Who is at the other end, for log lines.
  virtual const std::string& peer() const = 0;

  // Makes the stream end by itself when the peer stops answering for about `timeout_ms`
  // (a link that broke without a word). Streams that cannot break so ignore it.
  virtual void WatchLiveness(int /*timeout_ms*/) {}
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_BYTE_STREAM_H_
