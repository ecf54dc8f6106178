// Tests of the requester's window (sim/verbs/request_window): RESPONSEs are taken only in the
// order the requests were sent, one each, as an RC responder answers.
#include "sim/verbs/request_window.h"

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

EncodedRequest Request(uint64_t sequence) {
  EncodedRequest request;
  request.sequence = sequence;
  request.window_bytes = 100;
  return request;
}

TEST(RequestWindowTest, TakesResponsesInTheOrderSent) {
  RequestWindow window;
  EXPECT_TRUE(window.Idle());
  for (uint64_t sequence : {3, 4, 7}) ASSERT_TRUE(window.Submit(Request(sequence)).has_value());
  EXPECT_EQ(300u, window.BytesUnderWay());
  EXPECT_TRUE(window.TakeResponse(3));
  EXPECT_TRUE(window.TakeResponse(4));
  EXPECT_FALSE(window.Idle());
  EXPECT_TRUE(window.TakeResponse(7));  // 5 and 6 were never sent (executed directly)
  EXPECT_TRUE(window.Idle());
  EXPECT_EQ(0u, window.BytesUnderWay());
}

// A peer that answers a later request first, or one twice, or one never sent, is no RC
// responder: its answer is refused (the link then ends the connection), and the window
// still waits for the answers it is owed.
TEST(RequestWindowTest, RefusesAnswersOutOfOrderTwiceOrToNothing) {
  RequestWindow window;
  EXPECT_FALSE(window.TakeResponse(0));  // nothing under way
  for (uint64_t sequence : {3, 4, 5}) ASSERT_TRUE(window.Submit(Request(sequence)).has_value());
  EXPECT_FALSE(window.TakeResponse(5));  // skips 3 and 4
  EXPECT_FALSE(window.TakeResponse(2));  // before any sent
  EXPECT_FALSE(window.TakeResponse(9));  // never sent
  EXPECT_EQ(3u, window.Unanswered());
  EXPECT_EQ(300u, window.BytesUnderWay());
  EXPECT_TRUE(window.TakeResponse(3));
  EXPECT_FALSE(window.TakeResponse(3));  // twice
  EXPECT_TRUE(window.TakeResponse(4));
  EXPECT_TRUE(window.TakeResponse(5));
  EXPECT_TRUE(window.Idle());
}

}  // namespace
}  // namespace rpma_sim
