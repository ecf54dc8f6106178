// Tests of the REQUEST codec (sim/verbs/wire_codec): a request's carried bytes are copied
// from its region only while the region is registered.
#include "sim/verbs/wire_codec.h"

#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/verbs/memory_region.h"

namespace rpma_sim {
namespace {

class WireCodecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memset(bytes_, 0x5C, sizeof(bytes_));
    region_ = MemoryRegionTable::Get().Register(nullptr, bytes_, sizeof(bytes_), 0);
    ASSERT_NE(nullptr, region_);
  }
  void TearDown() override {
    if (region_ && MemoryRegionTable::Get().IsRegistered(*region_))
      MemoryRegionTable::Get().Deregister(region_);
  }

  // A 64 B write from offset 8 of the region.
  SendRequest Write() const {
    SendRequest request;
    request.opcode = SendOpcode::kWrite;
    request.local = region_;
    request.local_offset = 8;
    request.length = 64;
    request.remote_addr = 0x1000;
    request.rkey = 7;
    return request;
  }

  uint8_t bytes_[128];
  std::shared_ptr<MemoryRegion> region_;
};

TEST_F(WireCodecTest, CarriesTheBytesOfARegisteredRegion) {
  std::optional<EncodedRequest> encoded = EncodeRequest(Write(), 3, PayloadRoute::kCarried);
  ASSERT_TRUE(encoded.has_value());
  EXPECT_EQ(3u, encoded->sequence);
  ASSERT_GE(encoded->body.size(), 64u);
  // The bytes come last, and decode as the same request.
  EXPECT_EQ(std::string(64, '\x5C'), std::string(encoded->body.end() - 64, encoded->body.end()));
  InboundRequest inbound;
  std::string error;
  const std::vector<uint8_t>& body = encoded->body;
  ASSERT_TRUE(
      DecodeRequest(FrameBody(body.data(), body.data() + body.size()), nullptr, &inbound, &error))
      << error;
  EXPECT_EQ(3u, inbound.sequence);
  EXPECT_EQ(64u, inbound.request.length);
  EXPECT_EQ(0x1000u, inbound.request.remote_addr);
}

// A request kept (or held) after its post is encoded later: if its region was deregistered
// meanwhile, nothing is read from the buffer, which may be freed memory by then.
TEST_F(WireCodecTest, RefusesARegionDeregisteredSinceThePost) {
  SendRequest request = Write();
  MemoryRegionTable::Get().Deregister(region_);
  EXPECT_FALSE(EncodeRequest(request, 3, PayloadRoute::kCarried).has_value());
  // Without bytes to carry, nothing is read: a read still encodes.
  request.opcode = SendOpcode::kRead;
  EXPECT_TRUE(EncodeRequest(request, 4, PayloadRoute::kCarried).has_value());
}

}  // namespace
}  // namespace rpma_sim
