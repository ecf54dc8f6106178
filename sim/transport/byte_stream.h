// byte_stream.h -- an ordered, reliable byte stream between two processes: a TCP socket
// (socket_stream.h) or a pair of rings in a shared-memory segment (shm_stream.h).
//
// A FrameWire carries frames over any ByteStream; the stream only moves bytes.
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

  // Reads exactly `size` bytes, waiting for them; false once the stream ended or broke.
  // One reader thread at a time.
  virtual bool ReadExactly(uint8_t* data, size_t size) = 0;

  // Writes from `parts`. With `dont_wait` it takes what fits now (possibly nothing);
  // otherwise it waits until it took something. Returns the bytes taken, or -1 when the
  // stream is broken. One writer at a time.
  virtual ssize_t Write(const iovec* parts, int count, bool dont_wait) = 0;

  // Ends the stream both ways after the bytes already written: the peer reads them, then
  // the end. A blocked reader or writer of this side returns.
  virtual void Shutdown() = 0;

  // Who is at the other end, for log lines.
  virtual const std::string& peer() const = 0;

  // Makes the stream end by itself when the peer stops answering for about `timeout_ms`
  // (a link that broke without a word). Streams that cannot break so ignore it.
  virtual void WatchLiveness(int /*timeout_ms*/) {}

  // Streams that can say how much arrived (shared memory) let another thread than the
  // reader take whole frames without waiting (FrameWire::DeliverArrived). Available:
  // bytes readable now; Peek copies the next `size` of them without taking them;
  // WaitReadable waits until there is at least one byte (true) or the stream ended (false).
  virtual bool CanPeek() const { return false; }
  virtual size_t Available() { return 0; }
  virtual bool Peek(uint8_t* /*data*/, size_t /*size*/) { return false; }
  // Takes exactly `size` bytes that Available() said are there, without waiting; false if
  // they were not all there after all (a corrupt stream: the caller ends it).
  virtual bool TryReadExactly(uint8_t* /*data*/, size_t /*size*/) { return false; }
  virtual bool WaitReadable() { return true; }
  // Whether nothing more will arrive (what arrived may still be unread).
  virtual bool Ended() { return false; }

  // Streams the progress engine waits for (sockets), with no thread of their own. Each
  // AsyncWait must be started on the engine's thread; it calls `ready` there once the
  // stream is readable (or ended, or broken), or writable. TryRead takes what is there now:
  // the bytes taken, 0 if nothing is there yet, -1 at the end or on an error.
  virtual bool EngineDriven() const { return false; }
  virtual void AsyncWaitReadable(std::function<void()> /*ready*/) {}
  virtual void AsyncWaitWritable(std::function<void()> /*ready*/) {}
  virtual ssize_t TryRead(uint8_t* /*data*/, size_t /*size*/) { return -1; }
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_BYTE_STREAM_H_
