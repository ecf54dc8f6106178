// real_backend_test.cc -- under --config=real, //api:rpma is Debian's librpma: on a machine
// without an RDMA device it must fail cleanly with RPMA_E_PROVIDER, and rpma_sim.h's
// extensions must link and report RPMA_E_NOSUPP.
#include <librpma.h>
#include <rpma_sim.h>

#include <gtest/gtest.h>

TEST(RealBackend, LocalDeviceLookupFailsWithProvider) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  EXPECT_EQ(nullptr, ctx);
}

TEST(RealBackend, RemoteDeviceLookupFailsWithProvider) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
}

TEST(RealBackend, ArgumentChecksStillWork) {
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_utils_get_ibv_context(nullptr, RPMA_UTIL_IBV_CONTEXT_LOCAL, nullptr));
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_new(nullptr, nullptr));
  EXPECT_STREQ("Provider error occurred", rpma_err_2str(RPMA_E_PROVIDER));
}

TEST(RealBackend, SimulatorExtensionsReportNotSupported) {
  bool enabled = true;
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_sim_set_device_cap(RPMA_SIM_CAP_NATIVE_FLUSH, true));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_sim_get_device_cap(RPMA_SIM_CAP_NATIVE_FLUSH, &enabled));
  EXPECT_EQ(RPMA_E_NOSUPP, rpma_sim_node_fail(nullptr));
}
