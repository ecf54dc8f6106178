// Tests of SegmentMappingsOf and MapsSegment (sim/transport/proc_maps): a process maps a
// segment while it is named and once it is unlinked, and init does not, so a pid a peer
// writes into a header is checked. (segment_census_test names a child that opened one.)
#include "sim/transport/proc_maps.h"

#include <unistd.h>

#include <memory>

#include <gtest/gtest.h>

#include "sim/transport/shm_segment.h"

namespace rpma_sim {
namespace {

const size_t kRingCapacity = ShmSegment::RingCapacityFor(10);

TEST(ProcMapsTest, ThisProcessMapsItsSegmentNamedAndUnlinked) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  const std::string name = client->name();
  EXPECT_TRUE(MapsSegment(getpid(), name));
  bool found = false;
  for (const SegmentMapping& mapping : SegmentMappingsOf(getpid())) {
    if (mapping.name != name) continue;
    found = true;
    EXPECT_EQ(reinterpret_cast<uint64_t>(client->mapping()), mapping.start);
    EXPECT_EQ(0u, mapping.range.find(mapping.range.substr(0, mapping.range.find('-'))));
  }
  EXPECT_TRUE(found);
  client->Unlink();  // "(deleted)" in maps from now on
  EXPECT_TRUE(MapsSegment(getpid(), name));
  client.reset();
  EXPECT_FALSE(MapsSegment(getpid(), name));
}

TEST(ProcMapsTest, OtherProcessesDoNotMapIt) {
  std::shared_ptr<ShmSegment> client;
  ASSERT_EQ(ShmSegment::Create(kRingCapacity, &client), Status::kOk);
  EXPECT_FALSE(MapsSegment(1, client->name()));
  EXPECT_FALSE(MapsSegment(0, client->name()));
  EXPECT_FALSE(MapsSegment(-5, client->name()));
  EXPECT_FALSE(MapsSegment(getpid(), client->name() + "0"));  // another name
}

}  // namespace
}  // namespace rpma_sim
