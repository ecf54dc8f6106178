// Tests of the per-queue-pair execution locks (sim/verbs/execution_lock.h, QueuePair): one
// connection's traffic does not wait for another's lock, the two ends of an in-process
// connection are locked together, and the queue pairs of one SRQ share its lock. Queue
// pairs are made directly on a protection domain of the device, in this process.
#include <infiniband/verbs.h>
#include <sys/syscall.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "sim/fabric/device.h"
#include "sim/verbs/completion_queue.h"
#include "sim/verbs/protection_domain.h"
#include "sim/verbs/queue_pair.h"
#include "sim/verbs/shared_receive_queue.h"
#include "tests/sim/sim_test_support.h"

namespace rpma_sim {
namespace {

using rpma_sim_test::CurrentTid;
using rpma_sim_test::WaitUntilBlockedIn;

// How long a write may take before the test calls it blocked: a safety net, never a wait
// for the event (which is a completion that arrives at once).
constexpr auto kSafetyNet = std::chrono::seconds(30);

// A write posted from another thread, and that thread's id.
struct Writer {
  std::future<ibv_wc_status> status;
  pid_t tid;

  // True once the writer sleeps on a lock, without having completed.
  bool Blocked() {
    return WaitUntilBlockedIn(tid, SYS_futex) &&
           status.wait_for(std::chrono::seconds(0)) == std::future_status::timeout;
  }
};

// One in-process connection: two queue pairs with their completion queues, and a region on
// the responder's side.
struct Connection {
  std::shared_ptr<CompletionQueue> requester_cq, responder_cq;
  std::shared_ptr<QueuePair> requester, responder;
};

class QueuePairLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pd_ = std::make_shared<ProtectionDomain>(Device::Get());
    ASSERT_EQ(pd_->RegisterMemory(source_, sizeof(source_), IBV_ACCESS_LOCAL_WRITE, &source_mr_),
              Status::kOk);
    ASSERT_EQ(pd_->RegisterMemory(target_, sizeof(target_),
                                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &target_mr_),
              Status::kOk);
  }

  void TearDown() override {
    pd_->DeregisterMemory(source_mr_);
    pd_->DeregisterMemory(target_mr_);
  }

  Connection Connect(std::shared_ptr<SharedReceiveQueue> responder_srq = nullptr) {
    Connection c;
    c.requester_cq = std::make_shared<CompletionQueue>(16, std::make_shared<CompletionChannel>());
    c.responder_cq = std::make_shared<CompletionQueue>(16, std::make_shared<CompletionChannel>());
    QueuePairConfig requester_config;
    requester_config.send_cq = requester_config.recv_cq = c.requester_cq;
    QueuePairConfig responder_config;
    responder_config.send_cq = responder_config.recv_cq = c.responder_cq;
    responder_config.srq = responder_srq;
    c.requester = std::make_shared<QueuePair>(pd_, requester_config);
    c.responder = std::make_shared<QueuePair>(pd_, responder_config);
    c.responder->AttachToSharedReceiveQueue();
    QueuePair::ConnectInProcess(c.requester, c.responder);
    return c;
  }

  // Posts an 8-byte signalled write on `c` from another thread; its future is ready with
  // the completion status once the completion was polled.
  Writer WriteFromAnotherThread(const Connection& c) {
    auto tid = std::make_shared<std::promise<pid_t>>();
    std::future<pid_t> tid_known = tid->get_future();
    Writer writer;
    writer.status = std::async(std::launch::async, [this, c, tid] {
      tid->set_value(CurrentTid());
      SendRequest write;
      write.opcode = SendOpcode::kWrite;
      write.signaled = true;
      write.local = source_mr_;
      write.length = 8;
      write.remote_addr = reinterpret_cast<uint64_t>(target_);
      write.rkey = target_mr_->rkey;
      if (c.requester->PostSend(write) != Status::kOk) return IBV_WC_GENERAL_ERR;
      ibv_wc wc{};
      const auto deadline = std::chrono::steady_clock::now() + kSafetyNet;
      while (c.requester_cq->Poll(1, &wc) == 0) {
        if (std::chrono::steady_clock::now() > deadline) return IBV_WC_GENERAL_ERR;
        std::this_thread::yield();
      }
      return wc.status;
    });
    writer.tid = tid_known.get();
    return writer;
  }

  // Holds `held`'s execution lock while a write on `c` is posted from another thread: the
  // write must wait for it, then complete once it is let go.
  void ExpectWriteWaitsFor(QueuePair* held, const Connection& c) {
    Writer write;
    {
      QueuePair::ExecutionScope lock(held);
      write = WriteFromAnotherThread(c);
      EXPECT_TRUE(write.Blocked());
    }
    ASSERT_EQ(write.status.wait_for(kSafetyNet), std::future_status::ready);
    EXPECT_EQ(write.status.get(), IBV_WC_SUCCESS);
  }

  std::shared_ptr<ProtectionDomain> pd_;
  uint8_t source_[64] = {1, 2, 3, 4, 5, 6, 7, 8};
  uint8_t target_[64] = {};
  std::shared_ptr<MemoryRegion> source_mr_, target_mr_;
};

TEST_F(QueuePairLockTest, AConnectionGoesOnWhileAnotherConnectionsLockIsHeld) {
  Connection busy = Connect();
  Connection other = Connect();
  QueuePair::ExecutionScope held(busy.requester.get());
  Writer write = WriteFromAnotherThread(other);
  ASSERT_EQ(write.status.wait_for(kSafetyNet), std::future_status::ready)
      << "a write waited for another connection's execution lock";
  EXPECT_EQ(write.status.get(), IBV_WC_SUCCESS);
}

TEST_F(QueuePairLockTest, BothEndsOfAnInProcessConnectionAreLockedTogether) {
  Connection c = Connect();
  // The responder's lock alone holds the requester's posting: the write executes there.
  ExpectWriteWaitsFor(c.responder.get(), c);
}

TEST_F(QueuePairLockTest, QueuePairsOfOneSharedReceiveQueueShareItsLock) {
  std::shared_ptr<SharedReceiveQueue> srq;
  ASSERT_EQ(SharedReceiveQueue::Create(pd_, 16, 0, &srq), Status::kOk);
  Connection first = Connect(srq);
  Connection second = Connect(srq);
  ExpectWriteWaitsFor(first.responder.get(), second);
}

}  // namespace
}  // namespace rpma_sim
