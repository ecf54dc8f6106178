// conn_churn_memory_test.cc -- a server that runs for days accepts and closes connection after
// connection: what one connection took must all be given back when it ends ("bounded like
// hardware"). The heap in use (mallinfo2) after a warm-up round must not grow with the number
// of connections that came and went.
//
// Over shared memory each connection's side starts a direct-access target, which the
// process's directory of targets lists. The directory once kept an entry for every target ever
// started until the next registration of a region a peer may write or read pruned it, so a
// server that registered its memory once and then served client after client grew by those
// entries with every connection.
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/common/test_support.h"

namespace {

constexpr int kRemoteUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC;
constexpr int kWarmUp = 1000;  // connections before the first count: one-time allocations
constexpr int kCycles = 3000;  // connections between the two counts
constexpr double kMaxBytesPerConnection = 10;  // allocator noise; a leak is several times that
constexpr int kSamples = 20;  // counts of the heap, each after one more connection, per reading

size_t HeapInUse() { return mallinfo2().uordblks; }

class ConnChurnMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(pair_.Listen());
    // The server's memory, registered once before it serves any client, as a server of a
    // PMem region does.
    region_.assign(64 * 1024, 0);
    ASSERT_EQ(0, rpma_mr_reg(pair_.peer, region_.data(), region_.size(), kRemoteUsage, &mr_));
  }
  void TearDown() override {
    if (mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    if (!HasFailure()) pair_.Teardown();
  }

  // One client connects, both sides are established, the client disconnects, both see
  // CLOSED and delete their connections.
  void OneConnection() {
    rpma_conn* client = nullptr;
    rpma_conn* server = nullptr;
    ASSERT_NO_FATAL_FAILURE(
        ConnectOnce(pair_.peer, pair_.ep, pair_.port, PairOptions(), &client, &server));
    ASSERT_NO_FATAL_FAILURE(DisconnectAndDelete(&client, &server));
  }

  // The heap in use once what connections that ended left to the progress engine is freed:
  // the least of kSamples counts, each after one more connection. (One count may catch the
  // objects of a connection the engine has not let go of yet: up to 50 KB more, measured.)
  void SettledHeapInUse(size_t* bytes) {
    size_t least = SIZE_MAX;
    for (int i = 0; i < kSamples; ++i) {
      ASSERT_NO_FATAL_FAILURE(OneConnection());
      least = std::min(least, HeapInUse());
    }
    *bytes = least;
  }

  ConnectedPair pair_;
  std::vector<char> region_;
  rpma_mr_local* mr_ = nullptr;
};

// Connections that come and go leave nothing behind in the heap. (Over shared memory the heap
// grew by 50 to 100 B for every connection: two direct-access targets' directory entries,
// one per side, were pruned only when a region was registered.)
TEST_F(ConnChurnMemoryTest, ConnectionsThatComeAndGoLeaveTheHeapAsItWas) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' allocators do not count the heap for mallinfo2";
#endif
  for (int i = 0; i < kWarmUp; ++i) ASSERT_NO_FATAL_FAILURE(OneConnection());
  size_t before = 0, after = 0;
  ASSERT_NO_FATAL_FAILURE(SettledHeapInUse(&before));
  for (int i = 0; i < kCycles; ++i) ASSERT_NO_FATAL_FAILURE(OneConnection());
  ASSERT_NO_FATAL_FAILURE(SettledHeapInUse(&after));
  const double per_connection =
      (static_cast<double>(after) - static_cast<double>(before)) / kCycles;
  EXPECT_LT(per_connection, kMaxBytesPerConnection)
      << "the heap in use grew from " << before << " B to " << after << " B over " << kCycles
      << " connections that were closed and deleted";
}

}  // namespace
