// frame.cc -- encoding and validating frame headers; growing and copying a received frame's
// body.
#include "sim/transport/frame.h"

#include <string.h>

#include <algorithm>
#include <utility>

namespace rpma_sim {

void EncodeFrameHeader(FrameType type, uint32_t body_length, uint8_t out[kFrameHeaderSize]) {
  PutLe(out, kFrameMagic, 4);
  PutLe(out + 4, kProtocolVersion, 2);
  PutLe(out + 6, static_cast<uint16_t>(type), 2);
  PutLe(out + 8, body_length, 4);
  PutLe(out + 12, 0, 4);  // reserved
}

bool DecodeFrameHeader(const uint8_t in[kFrameHeaderSize], FrameType* type, uint32_t* body_length,
                       std::string* error) {
  ByteReader reader(in, kFrameHeaderSize);
  uint32_t magic = reader.U32();
  uint16_t version = reader.U16();
  uint16_t raw_type = reader.U16();
  uint32_t length = reader.U32();
  if (magic != kFrameMagic) {
    *error = "bad magic (not an rpma-sim peer)";
    return false;
  }
  if (version != kProtocolVersion) {
    *error = "protocol version " + std::to_string(version) + " (this side speaks " +
             std::to_string(kProtocolVersion) + ")";
    return false;
  }
  if (raw_type < static_cast<uint16_t>(FrameType::kHello) ||
      raw_type > static_cast<uint16_t>(FrameType::kPlaced)) {
    *error = "unknown frame type " + std::to_string(raw_type);
    return false;
  }
  if (length > kMaxFrameBody) {
    *error = "frame of " + std::to_string(length) + " bytes is too large";
    return false;
  }
  *type = static_cast<FrameType>(raw_type);
  *body_length = length;
  return true;
}

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
