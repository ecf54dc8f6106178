// frame.h -- the framing of rpma-sim's wire protocol (PROTOCOL.md): a 16-byte header and a
// body, little-endian; a received frame and its body; the byte readers and writers every
// frame body is built with.
//
// The transport only frames bytes; what a body means is up to the layer that sends it
// (cm/ for connection management, verbs/ for work requests and their outcomes).
#ifndef RPMA_SIM_TRANSPORT_FRAME_H_
#define RPMA_SIM_TRANSPORT_FRAME_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>
#include <string>
#include <vector>

namespace rpma_sim {

constexpr uint32_t kFrameMagic = 0x4d535052;  // "RPSM" on the wire
constexpr uint16_t kProtocolVersion = 8;
constexpr size_t kFrameHeaderSize = 16;
// The largest body a peer may send: a 1 GiB message plus its request fields.
constexpr uint32_t kMaxFrameBody = (1u << 30) + 256;

enum class FrameType : uint16_t {
  kHello = 1,       // client -> server: connect request with private data
  kAccept = 2,      // server -> client: accepted, with private data
  kReject = 3,      // server -> client: rejected
  kDisconnect = 4,  // either side: rdma_disconnect
  kRequest = 5,     // requester -> responder: one work request
  kResponse = 6,    // responder -> requester: its outcome (and a read's bytes)
  kDoorbell = 7,    // either side, on TCP: look at the shared-memory rings (empty body)
  kPlaced = 8,      // initiator -> target, over shared memory: take the placement records
};

// The body of a received frame: bytes that grow as they arrive and are
// filled from the stream at once, so they are never zeroed first, and are moved with one
// memcpy when they outgrow their memory. (A std::vector zero-fills what it grows by; one
// with an allocator that does not still constructs, and in an unoptimized build destroys,
// its bytes one call at a time: most of a test's time with 8 MiB frames.)
class FrameBody {
 public:
  FrameBody() = default;
  // A copy of [begin, end).
  FrameBody(const uint8_t* begin, const uint8_t* end);
  FrameBody(const FrameBody& other);
  FrameBody& operator=(const FrameBody& other);
  FrameBody(FrameBody&& other) noexcept;
  FrameBody& operator=(FrameBody&& other) noexcept;
  ~FrameBody() = default;

  uint8_t* data() { return bytes_.get(); }
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  const uint8_t* begin() const { return bytes_.get(); }
  const uint8_t* end() const { return bytes_.get() + size_; }
  uint8_t operator[](size_t i) const { return bytes_[i]; }
  uint8_t back() const { return bytes_[size_ - 1]; }

  // Makes room for `capacity` bytes, moving the ones there (never shrinks).
  void reserve(size_t capacity);
  // `size` bytes: the first ones as they were, new ones as they happen to be (the caller
  // fills them). Grows the memory to at least twice what it was when it must.
  void resize(size_t size);

 private:
  std::unique_ptr<uint8_t[]> bytes_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// A received frame, whole.
struct Frame {
  FrameType type;
  FrameBody body;
};

// Bytes to decode, wherever they are kept (a received body, or a vector a test built).
struct ByteSpan {
  ByteSpan(const uint8_t* bytes, size_t length) : data(bytes), size(length) {}
  ByteSpan(const std::vector<uint8_t>& bytes) : data(bytes.data()), size(bytes.size()) {}
  ByteSpan(const FrameBody& bytes) : data(bytes.data()), size(bytes.size()) {}
  const uint8_t* data;
  size_t size;
};

// Encodes a header for a body of `body_length` bytes.
void EncodeFrameHeader(FrameType type, uint32_t body_length, uint8_t out[kFrameHeaderSize]);

// Decodes and validates a header. On failure returns false and says why in *error.
bool DecodeFrameHeader(const uint8_t in[kFrameHeaderSize], FrameType* type, uint32_t* body_length,
                       std::string* error);

// Stores the `n` low bytes of `v` at `out`, least significant first.
inline void PutLe(uint8_t* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Appends little-endian values to a byte vector.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>* out) : out_(out) {}
  void U8(uint8_t v) { out_->push_back(v); }
  void U16(uint16_t v) { Le(v, 2); }
  void U32(uint32_t v) { Le(v, 4); }
  void U64(uint64_t v) { Le(v, 8); }
  void Bytes(const void* data, size_t len) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    out_->insert(out_->end(), bytes, bytes + len);
  }

 private:
  void Le(uint64_t v, int n) {
    uint8_t bytes[8];
    PutLe(bytes, v, n);
    out_->insert(out_->end(), bytes, bytes + n);  // one check of the capacity, not n
  }
  std::vector<uint8_t>* out_;
};

// Reads little-endian values from a body; every read checks the bounds, and ok() turns false
// (for good) on the first read past the end.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t U8() { return static_cast<uint8_t>(Le(1)); }
  uint16_t U16() { return static_cast<uint16_t>(Le(2)); }
  uint32_t U32() { return static_cast<uint32_t>(Le(4)); }
  uint64_t U64() { return Le(8); }
  // Returns a pointer to the next `len` bytes and skips them, or nullptr past the end.
  const uint8_t* Bytes(size_t len) {
    if (!ok_ || len > size_ - offset_) {
      ok_ = false;
      return nullptr;
    }
    const uint8_t* p = data_ + offset_;
    offset_ += len;
    return p;
  }
  size_t remaining() const { return size_ - offset_; }
  bool ok() const { return ok_; }

 private:
  uint64_t Le(size_t n) {
    const uint8_t* p = Bytes(n);
    uint64_t v = 0;
    if (p != nullptr)
      for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    return v;
  }
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  bool ok_ = true;
};

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_FRAME_H_
