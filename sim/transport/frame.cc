// frame.cc -- encoding and validating frame headers.
#include "sim/transport/frame.h"

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

}  // namespace rpma_sim
