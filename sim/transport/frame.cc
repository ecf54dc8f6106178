// frame.cc -- encoding and validating frame headers.
#include "sim/transport/frame.h"

namespace rpma_sim {

void EncodeFrameHeader(FrameType type, uint32_t body_length, uint8_t out[kFrameHeaderSize]) {
  std::vector<uint8_t> header;
  ByteWriter writer(&header);
  writer.U32(kFrameMagic);
  writer.U16(kProtocolVersion);
  writer.U16(static_cast<uint16_t>(type));
  writer.U32(body_length);
  writer.U32(0);  // reserved
  for (size_t i = 0; i < kFrameHeaderSize; ++i) out[i] = header[i];
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
