// Tests of Node (sim/fabric/node): identities, failing a node's live members once each, and
// a node that stays usable after failing.
#include "sim/fabric/node.h"

#include <memory>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

class CountingMember : public NodeMember {
 public:
  void OnNodeFailed() override { ++failures; }
  int failures = 0;
};

TEST(NodeTest, EveryNodeHasItsOwnId) {
  std::set<uint64_t> ids;
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < 1000; ++i) {
    nodes.push_back(std::make_unique<Node>());
    ids.insert(nodes.back()->id());
  }
  EXPECT_EQ(1000u, ids.size());
}

TEST(NodeTest, FailTellsEachLiveMemberOnce) {
  Node node;
  auto a = std::make_shared<CountingMember>();
  auto b = std::make_shared<CountingMember>();
  node.Join(a);
  node.Join(b);
  EXPECT_EQ(2, node.Fail());
  EXPECT_EQ(1, a->failures);
  EXPECT_EQ(1, b->failures);
  // Told once: a second failure finds no members left.
  EXPECT_EQ(0, node.Fail());
  EXPECT_EQ(1, a->failures);
}

TEST(NodeTest, MembersThatEndedAreNotTold) {
  Node node;
  auto kept = std::make_shared<CountingMember>();
  node.Join(kept);
  {
    auto gone = std::make_shared<CountingMember>();
    node.Join(gone);
  }
  EXPECT_EQ(1, node.Fail());
  EXPECT_EQ(1, kept->failures);
}

TEST(NodeTest, MembersJoiningAfterAFailureAreToldByTheNextOne) {
  Node node;
  node.Fail();
  auto later = std::make_shared<CountingMember>();
  node.Join(later);
  EXPECT_EQ(1, node.Fail());
  EXPECT_EQ(1, later->failures);
}

// Many members come and go (connections opened and closed): the ended ones are dropped as
// new ones join, and every live one is still told.
TEST(NodeTest, ManyShortLivedMembersAndFewLiveOnes) {
  Node node;
  std::vector<std::shared_ptr<CountingMember>> live;
  for (int i = 0; i < 10000; ++i) {
    auto member = std::make_shared<CountingMember>();
    node.Join(member);
    if (i % 1000 == 0) live.push_back(member);
  }
  EXPECT_EQ(static_cast<int>(live.size()), node.Fail());
  for (const auto& member : live) EXPECT_EQ(1, member->failures);
}

}  // namespace
}  // namespace rpma_sim
