// pair_fixture.cc -- the fixture over the transports: each TEST_P of a PairTest runs once on
// inproc, shm and tcp (or, for a server in a child process, shm and tcp).
#include "rpma_sim/testing.h"

namespace rpma_sim {
namespace testing {

::testing::internal::ParamGenerator<rpma_sim_transport> AllTransports() {
  return ::testing::Values(RPMA_SIM_TRANSPORT_INPROC, RPMA_SIM_TRANSPORT_SHM,
                           RPMA_SIM_TRANSPORT_TCP);
}

::testing::internal::ParamGenerator<rpma_sim_transport> ProcessTransports() {
  return ::testing::Values(RPMA_SIM_TRANSPORT_SHM, RPMA_SIM_TRANSPORT_TCP);
}

std::string TransportName(const ::testing::TestParamInfo<rpma_sim_transport>& info) {
  switch (info.param) {
    case RPMA_SIM_TRANSPORT_AUTO:
      return "auto";
    case RPMA_SIM_TRANSPORT_INPROC:
      return "inproc";
    case RPMA_SIM_TRANSPORT_SHM:
      return "shm";
    case RPMA_SIM_TRANSPORT_TCP:
      return "tcp";
  }
  return "transport" + std::to_string(static_cast<int>(info.param));
}

void PairTest::SetUp() {
  ASSERT_EQ(0, rpma_sim_get_transport(&previous_));
  ASSERT_EQ(0, rpma_sim_set_transport(GetParam()));
}

void PairTest::TearDown() {
  if (HasFailure()) {
    // After a failure the state is unknown: free quietly (the destructor) rather than wait
    // for events that may never come.
  } else {
    pair_.Teardown();
  }
  EXPECT_EQ(0, rpma_sim_set_transport(previous_));
}

}  // namespace testing
}  // namespace rpma_sim
