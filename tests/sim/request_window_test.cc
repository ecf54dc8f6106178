// Tests of the requester's window (sim/verbs/request_window): RESPONSEs are taken only in the
// order the requests were sent, each once, as an RC responder answers.
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

// One RESPONSE may answer the first few under way together (PROTOCOL.md): it names the last
// and how many; each is answered, in order, with whether it expected bytes back.
TEST(RequestWindowTest, TakesOneResponseForTheFirstFewUnderWay) {
  RequestWindow window;
  for (uint64_t sequence : {3, 4, 7, 8}) {
    EncodedRequest request = Request(sequence);
    request.read_back = sequence == 4;
    ASSERT_TRUE(window.Submit(std::move(request)).has_value());
  }
  RequestWindow::Answered answered[kMaxAnsweredTogether];
  ASSERT_TRUE(window.TakeResponses(7, 3, answered));
  EXPECT_EQ(3u, answered[0].sequence);
  EXPECT_FALSE(answered[0].read_back);
  EXPECT_EQ(4u, answered[1].sequence);
  EXPECT_TRUE(answered[1].read_back);
  EXPECT_EQ(7u, answered[2].sequence);
  EXPECT_EQ(1u, window.Unanswered());
  EXPECT_EQ(100u, window.BytesUnderWay());
  EXPECT_TRUE(window.TakeResponses(8, 1, nullptr));
  EXPECT_TRUE(window.Idle());
}

// A count that does not end at the sequence it names, more than are under way, none, or more
// than one RESPONSE may answer, is refused, and nothing is answered by it.
TEST(RequestWindowTest, RefusesAResponseForSeveralThatDoNotEndWhereItSays) {
  RequestWindow window;
  for (uint64_t sequence = 1; sequence <= kMaxAnsweredTogether + 1; ++sequence)
    ASSERT_TRUE(window.Submit(Request(sequence)).has_value());
  EXPECT_FALSE(window.TakeResponses(3, 2, nullptr));  // the first two end at 2
  EXPECT_FALSE(window.TakeResponses(2, 0, nullptr));  // answers none
  EXPECT_FALSE(window.TakeResponses(1, 2, nullptr));  // 1 is the first, not the second
  EXPECT_FALSE(window.TakeResponses(kMaxAnsweredTogether + 1, kMaxAnsweredTogether + 1,
                                    nullptr));  // more than one RESPONSE answers
  EXPECT_EQ(kMaxAnsweredTogether + 1u, window.Unanswered());
  EXPECT_TRUE(window.TakeResponses(kMaxAnsweredTogether, kMaxAnsweredTogether, nullptr));
  EXPECT_FALSE(window.TakeResponses(kMaxAnsweredTogether + 2, 2, nullptr));  // one is left
  EXPECT_TRUE(window.TakeResponse(kMaxAnsweredTogether + 1));
  EXPECT_TRUE(window.Idle());
}

}  // namespace
}  // namespace rpma_sim
