// Tests of the REQUEST and RESPONSE codec (sim/verbs/wire_codec): a request's carried bytes
// are copied from its region only while the region is registered; successes without bytes
// fold into one RESPONSE, and nothing else does.
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

// Decodes a RESPONSE body, or says why it is malformed.
struct DecodedResponse {
  bool ok;
  uint64_t sequence;
  uint32_t answered;
  Outcome outcome;
  size_t length;
  std::string error;
};

DecodedResponse Decode(const std::vector<uint8_t>& body) {
  Frame frame{FrameType::kResponse, FrameBody(body.data(), body.data() + body.size())};
  DecodedResponse decoded{};
  const uint8_t* data;
  decoded.ok = DecodeResponse(frame, &decoded.sequence, &decoded.answered, &decoded.outcome, &data,
                              &decoded.length, &decoded.error);
  return decoded;
}

std::vector<uint8_t> Success(uint64_t sequence) { return EncodeResponse(sequence, Outcome{}, 0); }

TEST(ResponseCodecTest, FoldsSuccessesWithoutBytesIntoOneResponse) {
  std::vector<uint8_t> queued = Success(4);
  ASSERT_TRUE(MergeResponses(&queued, Success(5)));
  ASSERT_TRUE(MergeResponses(&queued, Success(9)));  // 6 to 8 executed directly, say
  DecodedResponse decoded = Decode(queued);
  ASSERT_TRUE(decoded.ok) << decoded.error;
  EXPECT_EQ(9u, decoded.sequence);
  EXPECT_EQ(3u, decoded.answered);
  EXPECT_EQ(IBV_WC_SUCCESS, decoded.outcome.status);
  EXPECT_EQ(0u, decoded.length);
  // One alone answers one.
  decoded = Decode(Success(4));
  ASSERT_TRUE(decoded.ok) << decoded.error;
  EXPECT_EQ(1u, decoded.answered);
}

TEST(ResponseCodecTest, FoldsNoErrorNorBytesNorMoreThanOneResponseAnswers) {
  std::vector<uint8_t> queued = Success(1);
  std::vector<uint8_t> error = EncodeResponse(2, Outcome{IBV_WC_REM_ACCESS_ERR}, 0);
  EXPECT_FALSE(MergeResponses(&queued, error));
  EXPECT_FALSE(MergeResponses(&error, Success(3)));
  std::vector<uint8_t> read = EncodeResponse(2, Outcome{}, 8);
  read.resize(read.size() + 8);
  EXPECT_FALSE(MergeResponses(&queued, read));
  EXPECT_FALSE(MergeResponses(&read, Success(3)));
  EXPECT_EQ(Success(1), queued);  // unchanged by what it refused
  for (uint64_t sequence = 2; sequence <= kMaxAnsweredTogether; ++sequence)
    ASSERT_TRUE(MergeResponses(&queued, Success(sequence)));
  EXPECT_FALSE(MergeResponses(&queued, Success(kMaxAnsweredTogether + 1)));
  EXPECT_EQ(kMaxAnsweredTogether, Decode(queued).answered);
}

// Only successes without bytes answer several; a peer that says otherwise is malformed.
TEST(ResponseCodecTest, RefusesSeveralAnsweredByAnErrorByBytesOrBeyondTheMost) {
  std::vector<uint8_t> body = Success(7);
  body[12] = 2;  // and the two before it
  ASSERT_TRUE(Decode(body).ok);
  std::vector<uint8_t> error = body;
  error[8] = IBV_WC_REM_ACCESS_ERR;
  EXPECT_FALSE(Decode(error).ok);
  EXPECT_NE(std::string::npos, Decode(error).error.find("several"));
  std::vector<uint8_t> bytes = body;
  bytes.push_back(0x11);
  EXPECT_FALSE(Decode(bytes).ok);
  std::vector<uint8_t> too_many = Success(7);
  too_many[12] = kMaxAnsweredTogether;  // answers one more than the most
  EXPECT_FALSE(Decode(too_many).ok);
  too_many[12] = kMaxAnsweredTogether - 1;
  EXPECT_TRUE(Decode(too_many).ok);
  std::vector<uint8_t> huge = Success(7);
  huge[15] = 0x80;
  EXPECT_FALSE(Decode(huge).ok);
}

}  // namespace
}  // namespace rpma_sim
