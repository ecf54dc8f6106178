// Tests of the HELLO and ACCEPT bodies (sim/cm/connect_messages): round trips with and
// without a shared-memory offer, and every malformed form the decoder must refuse.
#include "sim/cm/connect_messages.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

TEST(ConnectMessagesTest, HelloWithoutAnOfferRoundTrips) {
  HelloMessage hello;
  hello.private_data = {1, 2, 3};
  HelloMessage decoded;
  std::string error;
  ASSERT_TRUE(DecodeHello(EncodeHello(hello), 56, &decoded, &error)) << error;
  EXPECT_EQ(hello.private_data, decoded.private_data);
  EXPECT_FALSE(decoded.has_offer);
}

TEST(ConnectMessagesTest, HelloWithAnOfferRoundTrips) {
  HelloMessage hello;
  hello.private_data.assign(56, 0x5A);
  hello.has_offer = true;
  hello.offer = ShmOffer{"rpma-sim-42-0-deadbeef", 0x0123456789abcdef, true};
  hello.node = 0xfedcba9876543210;
  HelloMessage decoded;
  std::string error;
  ASSERT_TRUE(DecodeHello(EncodeHello(hello), 56, &decoded, &error)) << error;
  EXPECT_EQ(hello.private_data, decoded.private_data);
  ASSERT_TRUE(decoded.has_offer);
  EXPECT_EQ(hello.offer.name, decoded.offer.name);
  EXPECT_EQ(hello.offer.nonce, decoded.offer.nonce);
  EXPECT_TRUE(decoded.offer.required);
  EXPECT_EQ(hello.node, decoded.node);
}

TEST(ConnectMessagesTest, MalformedHellosAreRefused) {
  HelloMessage good;
  good.has_offer = true;
  good.offer = ShmOffer{"rpma-sim-1-0-1", 7, false};
  std::vector<uint8_t> body = EncodeHello(good);
  std::vector<std::vector<uint8_t>> bad = {
      {},                                                  // empty
      {0},                                                 // no offer flag
      {3, 'a', 'b'},                                       // private data past the end
      {0, 2},                                              // an offer flag that is neither 0 nor 1
      {0, 0, 9},                                           // bytes after the end
      std::vector<uint8_t>(body.begin(), body.end() - 1),  // offer cut short
  };
  std::vector<uint8_t> long_private(1, 57);
  long_private.resize(1 + 57, 'x');
  long_private.push_back(0);
  bad.push_back(long_private);  // 57 bytes of private data
  std::vector<uint8_t> not_required_flag = body;
  not_required_flag[2] = 2;  // required must be 0 or 1
  bad.push_back(not_required_flag);
  std::vector<uint8_t> empty_name = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  bad.push_back(empty_name);  // a name of 0 bytes
  for (size_t i = 0; i < bad.size(); ++i) {
    HelloMessage decoded;
    std::string error;
    EXPECT_FALSE(DecodeHello(bad[i], 56, &decoded, &error)) << "case " << i;
    EXPECT_FALSE(error.empty()) << "case " << i;
  }
}

TEST(ConnectMessagesTest, AcceptRoundTripsAndRefusesMalformedBodies) {
  AcceptMessage accept{std::vector<uint8_t>(196, 0x11), true, 0x1122334455667788};
  AcceptMessage decoded;
  std::string error;
  ASSERT_TRUE(DecodeAccept(EncodeAccept(accept), 196, &decoded, &error)) << error;
  EXPECT_EQ(accept.private_data, decoded.private_data);
  EXPECT_TRUE(decoded.shared_memory);
  EXPECT_EQ(accept.node, decoded.node);
  for (const std::vector<uint8_t>& bad :
       std::vector<std::vector<uint8_t>>{{}, {0}, {0, 2}, {0, 1, 0}, {5, 1, 2}}) {
    EXPECT_FALSE(DecodeAccept(bad, 196, &decoded, &error));
  }
  std::vector<uint8_t> too_long = EncodeAccept(accept);
  EXPECT_FALSE(DecodeAccept(too_long, 100, &decoded, &error));  // over the caller's limit
}

}  // namespace
}  // namespace rpma_sim
