// large_transfer_test.cc -- 8 MiB writes, reads and sends while the application busy-polls
// its completion queue (the kit's completion assertions), bytes checked end to end, on each
// transport (the kit's PairTest).
//
// 8 MiB is more than a shared-memory ring holds: without process_vm (the
// *_through_segment variant) such a frame arrives in pieces, so the polling application
// cannot take it whole and the connection's reader thread must, while the application keeps
// polling. In process and over TCP the same requests must behave the same.
#include <rpma_sim/testing.h>

namespace {

using rpma_sim::testing::LastCompletion;
using rpma_sim::testing::PairOptions;

constexpr size_t kSize = 8 << 20;

void Fill(uint8_t* buf, uint8_t seed) {
  for (size_t i = 0; i < kSize; ++i) buf[i] = static_cast<uint8_t>(seed + i * 13 + i / 4096);
}

class LargeTransferTest : public rpma_sim::testing::PairTest {
 protected:
  void SetUp() override {
    PairTest::SetUp();
    PairOptions options;
    options.client_region_size = options.server_region_size = kSize;
    ASSERT_NO_FATAL_FAILURE(Connect(options));
  }
};

TEST_P(LargeTransferTest, WriteOf8MiB) {
  Fill(client().memory, 1);
  ASSERT_EQ(0, rpma_write(client().conn, client().remote, 0, client().mr, 0, kSize,
                          RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_COMPLETION(client().cq, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS);
  EXPECT_BYTES_EQ(server().memory, client().memory, kSize);
}

TEST_P(LargeTransferTest, ReadOf8MiB) {
  Fill(server().memory, 2);
  ASSERT_EQ(0, rpma_read(client().conn, client().mr, 0, client().remote, 0, kSize,
                         RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_COMPLETION(client().cq, IBV_WC_RDMA_READ, IBV_WC_SUCCESS);
  EXPECT_EQ(kSize, LastCompletion().byte_len);
  EXPECT_BYTES_EQ(client().memory, server().memory, kSize);
}

TEST_P(LargeTransferTest, SendOf8MiB) {
  Fill(client().memory, 3);
  ASSERT_EQ(0, rpma_recv(server().conn, server().mr, 0, kSize, nullptr));
  ASSERT_EQ(0, rpma_send(client().conn, client().mr, 0, kSize, RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_COMPLETION(client().cq, IBV_WC_SEND, IBV_WC_SUCCESS);
  ASSERT_COMPLETION(server().cq, IBV_WC_RECV, IBV_WC_SUCCESS);
  EXPECT_EQ(kSize, LastCompletion().byte_len);
  EXPECT_BYTES_EQ(server().memory, client().memory, kSize);
}

INSTANTIATE_RPMA_SIM_TRANSPORTS(LargeTransferTest);

}  // namespace
