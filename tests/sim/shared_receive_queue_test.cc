// shared_receive_queue_test.cc -- SharedReceiveQueue: the queue pairs it remembers. Each is a
// weak_ptr to a queue pair made with make_shared, which keeps the destroyed queue pair's
// whole allocation until it is dropped: connections that come and go on an SRQ to which
// nothing is posted must not grow the process.
#include <malloc.h>

#include <memory>

#include <gtest/gtest.h>

#include "sim/fabric/device.h"
#include "sim/verbs/connection_queues.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/shared_receive_queue.h"

namespace rpma_sim {
namespace {

size_t HeapInUse() { return mallinfo2().uordblks; }

void MakeAndDropConnections(const std::shared_ptr<ProtectionDomain>& pd,
                            const std::shared_ptr<SharedReceiveQueue>& srq, int count) {
  ConnectionConfig config;
  config.srq = srq;
  for (int i = 0; i < count; ++i) {
    ConnectionQueues queues;
    ASSERT_EQ(Status::kOk, ConnectionQueues::Create(pd, config, &queues));
    queues.qp->Destroy();
  }
}

TEST(SharedReceiveQueueTest, DeletedConnectionsDoNotAccumulate) {
  auto pd = std::make_shared<ProtectionDomain>(Device::Get());
  std::shared_ptr<SharedReceiveQueue> srq;
  ASSERT_EQ(Status::kOk, SharedReceiveQueue::Create(pd, 16, 0, &srq));
  ASSERT_NO_FATAL_FAILURE(MakeAndDropConnections(pd, srq, 100));  // warm-up
  const size_t before = HeapInUse();
  constexpr int kConnections = 20000;
  ASSERT_NO_FATAL_FAILURE(MakeAndDropConnections(pd, srq, kConnections));
  const size_t after = HeapInUse();
  const size_t growth = after > before ? after - before : 0;
  // Nothing is alive any more: a steady heap, give or take a few pages.
  EXPECT_LT(growth, size_t{256} * 1024)
      << growth << " bytes kept for " << kConnections << " connections already gone ("
      << growth / kConnections << " bytes each)";
}

}  // namespace
}  // namespace rpma_sim
