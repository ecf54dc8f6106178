// local_error_placement_test.cc -- a work request that fails with one of the requester's own
// errors (a wc rule with IBV_WC_LOC_*) never left the requester, as on hardware, so none of
// its bytes may land at the target, and neither may those of the requests after it.
//
// The soak found that these statuses were once injected when the request completed, after it
// had executed at the target (docs/testing-the-project.md, "Soak").
#include <gtest/gtest.h>
#include <librpma.h>
#include <rpma_sim.h>

#include "tests/common/test_support.h"

namespace {

class LocalErrorPlacementTest : public PairFixture {
 protected:
  void TearDown() override {
    EXPECT_EQ(0, rpma_sim_fault_clear());
    PairFixture::TearDown();
  }
};

TEST_F(LocalErrorPlacementTest, WriteFailedLocallyPlacesNothing) {
  ASSERT_EQ(0, rpma_sim_fault_add("wc:op=write,status=IBV_WC_LOC_PROT_ERR,nth=1,side=client"));
  ASSERT_NO_FATAL_FAILURE(ConnectPair());
  Buffer* target = Register(4096, RPMA_MR_USAGE_WRITE_DST, 0x11);
  Buffer* source = Register(4096, RPMA_MR_USAGE_WRITE_SRC, 0xEE);
  rpma_mr_remote* remote = regs_.RemoteOf(target);
  ASSERT_NE(nullptr, remote);
  ASSERT_EQ(
      0, rpma_write(pair_.client, remote, 0, source->mr, 0, 64, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ASSERT_EQ(0, rpma_write(pair_.client, remote, 64, source->mr, 64, 64, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 1, IBV_WC_LOC_PROT_ERR, IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(client_cq_, 2, IBV_WC_WR_FLUSH_ERR, IBV_WC_RDMA_WRITE));
  size_t placed = 0;
  for (size_t i = 0; i < 128; ++i) placed += target->bytes[i] != 0x11;
  EXPECT_EQ(0u, placed) << "bytes of requests that never left the requester landed";
}

}  // namespace
