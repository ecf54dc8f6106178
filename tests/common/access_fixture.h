// access_fixture.h -- the fixture of the access-error and error-state tests: a connected
// pair with a target region and a local region, each inside unregistered guard bytes, so a
// test can prove that nothing outside a registered region was touched.
#ifndef RPMA_SIM_TESTS_COMMON_ACCESS_FIXTURE_H_
#define RPMA_SIM_TESTS_COMMON_ACCESS_FIXTURE_H_

#include <librpma.h>
#include <string.h>

#include <cstdint>
#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

inline constexpr size_t kSize = 4096;        // registered bytes of every region
inline constexpr size_t kGuard = 64;         // unregistered guard bytes before and after a region
inline constexpr uint8_t kGuardByte = 0xA5;  // what the guards hold
inline constexpr uint8_t kInitial = 0xEE;    // what a target region holds before the test

inline bool AllEqual(const uint8_t* p, size_t n, uint8_t value) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != value) return false;
  return true;
}

// A buffer of kGuard + kSize + kGuard bytes of which only the middle kSize are registered.
struct Guarded {
  Guarded() : bytes(kGuard + kSize + kGuard, kGuardByte) { memset(region(), kInitial, kSize); }
  uint8_t* region() { return bytes.data() + kGuard; }
  bool GuardsIntact() const {
    return AllEqual(bytes.data(), kGuard, kGuardByte) &&
           AllEqual(bytes.data() + kGuard + kSize, kGuard, kGuardByte);
  }
  bool RegionIs(uint8_t value) { return AllEqual(region(), kSize, value); }
  std::vector<uint8_t> bytes;
};

class AccessErrorTest : public PairFixture {
 protected:
  void Register(void* ptr, size_t size, int usage, rpma_mr_local** mr) {
    regs_.Register(pair_.peer, ptr, size, usage, mr);
  }

  void Descriptor(rpma_mr_local* mr, std::vector<uint8_t>* desc) {
    size_t size = 0;
    ASSERT_EQ(0, rpma_mr_get_descriptor_size(mr, &size));
    ASSERT_EQ(21u, size);
    desc->resize(size);
    ASSERT_EQ(0, rpma_mr_get_descriptor(mr, desc->data()));
  }

  // Registers `foreign`'s region with `usage` on a second peer (another protection domain).
  void RegisterForeign(Guarded* foreign, int usage, rpma_mr_local** mr) {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&other_peer_));
    ASSERT_NO_FATAL_FAILURE(regs_.Register(other_peer_, foreign->region(), kSize, usage, mr));
  }

  void FromDescriptor(const std::vector<uint8_t>& desc, rpma_mr_remote** remote) {
    ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), desc.size(), remote));
    regs_.Keep(*remote);
  }

  // A remote view of `mr` whose descriptor carries the wrong rkey (the real one plus one).
  void ForgedRkeyRemote(rpma_mr_local* mr, rpma_mr_remote** remote) {
    std::vector<uint8_t> desc;
    ASSERT_NO_FATAL_FAILURE(Descriptor(mr, &desc));
    uint32_t rkey =
        desc[16] | desc[17] << 8 | desc[18] << 16 | static_cast<uint32_t>(desc[19]) << 24;
    rkey += 1;
    for (int i = 0; i < 4; ++i) desc[16 + i] = static_cast<uint8_t>(rkey >> (8 * i));
    ASSERT_NO_FATAL_FAILURE(FromDescriptor(desc, remote));
  }

  // The remote view of `mr`, decoded from its descriptor as a client would.
  void RemoteOf(rpma_mr_local* mr, rpma_mr_remote** remote) {
    std::vector<uint8_t> desc;
    ASSERT_NO_FATAL_FAILURE(Descriptor(mr, &desc));
    ASSERT_NO_FATAL_FAILURE(FromDescriptor(desc, remote));
  }

  // Connect(); registers target_ (server side, `target_usage`, remote view remote_) and local_
  // (client side, `local_usage`, filled with a pattern).
  void Setup(int target_usage, int local_usage) {
    ASSERT_NO_FATAL_FAILURE(ConnectPair());
    for (size_t i = 0; i < kSize; ++i) local_.region()[i] = static_cast<uint8_t>(i * 13 + 1);
    ASSERT_NO_FATAL_FAILURE(Register(target_.region(), kSize, target_usage, &target_mr_));
    ASSERT_NO_FATAL_FAILURE(RemoteOf(target_mr_, &remote_));
    ASSERT_NO_FATAL_FAILURE(Register(local_.region(), kSize, local_usage, &local_mr_));
    local_before_ = local_.bytes;
  }

  // Waits for one completion on `cq` and checks its status, wr_id and qp_num.
  void ExpectCompletion(rpma_cq* cq, ibv_wc_status status, const void* ctx, uint32_t qp_num) {
    ibv_wc wc;
    ASSERT_EQ(0, WaitWc(cq, &wc));
    EXPECT_EQ(status, wc.status) << "wr_id " << wc.wr_id;
    EXPECT_EQ(reinterpret_cast<uint64_t>(ctx), wc.wr_id);
    EXPECT_EQ(qp_num, wc.qp_num);
  }

  // Takes `n` completions from `cq` and returns them by wr_id (order-independent checks).
  void CollectByWrId(rpma_cq* cq, size_t n, std::map<uint64_t, ibv_wc>* out) {
    for (size_t i = 0; i < n; ++i) {
      ibv_wc wc;
      ASSERT_EQ(0, WaitWc(cq, &wc)) << "completion " << i << " of " << n << " missing";
      EXPECT_EQ(0u, out->count(wc.wr_id)) << "wr_id " << wc.wr_id << " completed twice";
      (*out)[wc.wr_id] = wc;
    }
  }

  // Makes the client's queue pair fail with a remote access error (a write past the end).
  void FailClientWithRemoteAccessError(const void* ctx) {
    ASSERT_EQ(0, rpma_write(pair_.client, remote_, kSize - 4, local_mr_, 0, 8,
                            RPMA_F_COMPLETION_ALWAYS, ctx));
  }

  void ReleaseMore() override {
    if (other_peer_ != nullptr) {
      EXPECT_EQ(0, rpma_peer_delete(&other_peer_));
    }
  }

  Guarded target_;
  Guarded local_;
  std::vector<uint8_t> local_before_;
  rpma_mr_local* target_mr_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  rpma_mr_local* local_mr_ = nullptr;
  rpma_peer* other_peer_ = nullptr;  // a second peer (protection domain), when a test needs one
};

// Which one-sided operation a parameterised test runs.
enum class Dir { kWrite, kRead };

inline constexpr int kAllUsages = 0xFF;
inline constexpr int kLocalUsage = RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST;

#endif  // RPMA_SIM_TESTS_COMMON_ACCESS_FIXTURE_H_
