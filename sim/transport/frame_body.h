// frame_body.h -- the body of a received frame: bytes that grow as they arrive and are
// filled from the stream at once, so they are never zeroed first, and are moved with one
// memcpy when they outgrow their memory. (A std::vector zero-fills what it grows by; one
// with an allocator that does not still constructs, and in an unoptimized build destroys,
// its bytes one call at a time: most of a test's time with 8 MiB frames.)
#ifndef RPMA_SIM_TRANSPORT_FRAME_BODY_H_
#define RPMA_SIM_TRANSPORT_FRAME_BODY_H_

#include <stddef.h>
#include <stdint.h>

#include <memory>

namespace rpma_sim {

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

}  // namespace rpma_sim

#endif  // RPMA_SIM_TRANSPORT_FRAME_BODY_H_
