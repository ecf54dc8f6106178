// connect_messages_fuzzer.cc -- libFuzzer target: the body of a HELLO or an ACCEPT
// (sim/cm/connect_messages.h) as a peer sends it. The first byte picks which (even: HELLO, decoded
// by the server; odd: ACCEPT, decoded by the client); the rest is the body.
//
// Invariants (PROTOCOL.md): the private data a decoded message holds is within the limit the
// receiver passes (56 bytes on connect, 196 on accept) and within the body; the encoding is
// canonical, so a decoded message encodes back to exactly the body it came from.
#include <stdint.h>

#include <string>
#include <vector>

#include "sim/cm/cm_id.h"
#include "sim/cm/connect_messages.h"
#include "tests/fuzz/fuzz_check.h"

namespace rpma_sim {
namespace {

void CheckHello(const std::vector<uint8_t>& body) {
  HelloMessage hello;
  std::string error;
  if (!DecodeHello(body, kMaxConnectPrivateData, &hello, &error)) {
    FUZZ_CHECK(!error.empty());
    return;
  }
  FUZZ_CHECK(hello.private_data.size() <= kMaxConnectPrivateData);
  FUZZ_CHECK(hello.private_data.size() < body.size());
  FUZZ_CHECK(!hello.has_offer || (!hello.offer.name.empty() && hello.offer.name.size() <= 64));
  FUZZ_CHECK(EncodeHello(hello) == body);
}

void CheckAccept(const std::vector<uint8_t>& body) {
  AcceptMessage accept;
  std::string error;
  if (!DecodeAccept(body, kMaxAcceptPrivateData, &accept, &error)) {
    FUZZ_CHECK(!error.empty());
    return;
  }
  FUZZ_CHECK(accept.private_data.size() <= kMaxAcceptPrivateData);
  FUZZ_CHECK(accept.private_data.size() < body.size());
  FUZZ_CHECK(EncodeAccept(accept) == body);
}

}  // namespace
}  // namespace rpma_sim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> body(data + 1, data + size);
  if (data[0] % 2 == 0)
    rpma_sim::CheckHello(body);
  else
    rpma_sim::CheckAccept(body);
  return 0;
}
