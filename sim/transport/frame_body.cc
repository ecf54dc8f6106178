// frame_body.cc -- growing and copying a received frame's body.
#include "sim/transport/frame_body.h"

#include <string.h>

#include <algorithm>
#include <utility>

namespace rpma_sim {

FrameBody::FrameBody(const uint8_t* begin, const uint8_t* end) {
  resize(static_cast<size_t>(end - begin));
  if (size_ > 0) memcpy(bytes_.get(), begin, size_);
}

FrameBody::FrameBody(const FrameBody& other) : FrameBody(other.begin(), other.end()) {}

FrameBody& FrameBody::operator=(const FrameBody& other) {
  if (this != &other) *this = FrameBody(other);
  return *this;
}

FrameBody::FrameBody(FrameBody&& other) noexcept
    : bytes_(std::move(other.bytes_)), size_(other.size_), capacity_(other.capacity_) {
  other.size_ = other.capacity_ = 0;
}

FrameBody& FrameBody::operator=(FrameBody&& other) noexcept {
  bytes_ = std::move(other.bytes_);
  size_ = other.size_;
  capacity_ = other.capacity_;
  other.size_ = other.capacity_ = 0;
  return *this;
}

void FrameBody::reserve(size_t capacity) {
  if (capacity <= capacity_) return;
  // new uint8_t[n] leaves the bytes as they are (default-initialized).
  std::unique_ptr<uint8_t[]> moved(new uint8_t[capacity]);
  if (size_ > 0) memcpy(moved.get(), bytes_.get(), size_);
  bytes_ = std::move(moved);
  capacity_ = capacity;
}

void FrameBody::resize(size_t size) {
  if (size > capacity_) reserve(std::max(size, 2 * capacity_));
  size_ = size;
}

}  // namespace rpma_sim
