// connect_messages.cc -- encoding and decoding HELLO and ACCEPT bodies.
#include "sim/cm/connect_messages.h"

#include "sim/transport/frame.h"

namespace rpma_sim {
namespace {

constexpr size_t kMaxSegmentName = 64;

void WritePrivateData(ByteWriter* writer, const std::vector<uint8_t>& data) {
  writer->U8(static_cast<uint8_t>(data.size()));
  writer->Bytes(data.data(), data.size());
}

bool ReadPrivateData(ByteReader* reader, size_t max_private, std::vector<uint8_t>* data,
                     std::string* error) {
  size_t length = reader->U8();
  const uint8_t* bytes = reader->Bytes(length);
  if (bytes == nullptr) {
    *error = "truncated private data";
    return false;
  }
  if (length > max_private) {
    *error = "private data too long";
    return false;
  }
  data->assign(bytes, bytes + length);
  return true;
}

}  // namespace

std::vector<uint8_t> EncodeHello(const HelloMessage& hello) {
  std::vector<uint8_t> body;
  ByteWriter writer(&body);
  WritePrivateData(&writer, hello.private_data);
  writer.U8(hello.has_offer ? 1 : 0);
  if (hello.has_offer) {
    writer.U8(hello.offer.required ? 1 : 0);
    writer.U64(hello.offer.nonce);
    writer.U8(static_cast<uint8_t>(hello.offer.name.size()));
    writer.Bytes(hello.offer.name.data(), hello.offer.name.size());
  }
  writer.U64(hello.node);
  return body;
}

bool DecodeHello(ByteSpan body, size_t max_private, HelloMessage* hello, std::string* error) {
  ByteReader reader(body.data, body.size);
  if (!ReadPrivateData(&reader, max_private, &hello->private_data, error)) return false;
  uint8_t has_offer = reader.U8();
  if (has_offer == 1) {
    uint8_t required = reader.U8();
    hello->offer.nonce = reader.U64();
    size_t name_length = reader.U8();
    const uint8_t* name = reader.Bytes(name_length);
    if (name == nullptr || required > 1 || name_length == 0 || name_length > kMaxSegmentName) {
      *error = "malformed shared memory offer";
      return false;
    }
    hello->offer.required = required == 1;
    hello->offer.name.assign(reinterpret_cast<const char*>(name), name_length);
  }
  hello->node = reader.U64();
  if (!reader.ok() || has_offer > 1 || reader.remaining() != 0) {
    *error = "malformed connect request";
    return false;
  }
  hello->has_offer = has_offer == 1;
  return true;
}

std::vector<uint8_t> EncodeAccept(const AcceptMessage& accept) {
  std::vector<uint8_t> body;
  ByteWriter writer(&body);
  WritePrivateData(&writer, accept.private_data);
  writer.U8(accept.shared_memory ? 1 : 0);
  writer.U64(accept.node);
  return body;
}

bool DecodeAccept(ByteSpan body, size_t max_private, AcceptMessage* accept, std::string* error) {
  ByteReader reader(body.data, body.size);
  if (!ReadPrivateData(&reader, max_private, &accept->private_data, error)) return false;
  uint8_t shared_memory = reader.U8();
  accept->node = reader.U64();
  if (!reader.ok() || shared_memory > 1 || reader.remaining() != 0) {
    *error = "malformed accept";
    return false;
  }
  accept->shared_memory = shared_memory == 1;
  return true;
}

}  // namespace rpma_sim
