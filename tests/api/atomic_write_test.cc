// atomic_write_test.cc -- rpma_atomic_write: INVAL checks, 8 bytes placed, completion opcodes
// (portable and native), source copied at post, never torn, access errors.
#include <librpma.h>
#include <rpma_sim.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kWords = 8;  // the target region: 64 bytes, 8-byte aligned
constexpr size_t kSize = kWords * sizeof(uint64_t);
constexpr uint64_t kInitial = 0xEEEEEEEEEEEEEEEEull;
constexpr uint64_t kPatternA = 0x1111111111111111ull;
constexpr uint64_t kPatternB = 0x2222222222222222ull;

class AtomicWriteTest : public PairFixture {
 protected:
  // Connects a new pair (its peer reads the device capabilities now) and registers the target
  // words on the server side with `usage`; remote_ is the client's view of them.
  void Setup(int usage = RPMA_MR_USAGE_WRITE_DST) {
    ASSERT_NO_FATAL_FAILURE(ConnectPair());
    words_.assign(kWords, kInitial);
    ASSERT_NO_FATAL_FAILURE(regs_.Register(pair_.peer, words_.data(), kSize, usage, &target_mr_));
    ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(target_mr_, &remote_, &desc_));
  }

  void ExpectCompletion(ibv_wc_status status, const void* ctx, ibv_wc_opcode opcode) {
    ExpectQpCompletion(client_cq_, client_qp_num_, ctx, status, opcode);
  }

  bool WordsUntouchedExcept(size_t index) {
    for (size_t i = 0; i < kWords; ++i)
      if (i != index && words_[i] != kInitial) return false;
    return true;
  }

  std::vector<uint64_t> words_;
  std::vector<uint8_t> desc_;
  rpma_mr_local* target_mr_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  rpma_mr_remote* extra_remote_ = nullptr;
  rpma_mr_local* extra_mr_ = nullptr;

  // Registers 64 bytes starting 4 bytes into an aligned buffer: the region's address is not a
  // multiple of 8. extra_remote_ is the client's view of it.
  void RegisterMisalignedRegion(std::vector<uint64_t>* backing) {
    backing->assign(kWords + 1, kInitial);
    uint8_t* start = reinterpret_cast<uint8_t*>(backing->data()) + 4;
    ASSERT_NO_FATAL_FAILURE(
        regs_.Register(pair_.peer, start, kSize, RPMA_MR_USAGE_WRITE_DST, &extra_mr_));
    ASSERT_NO_FATAL_FAILURE(regs_.RemoteOf(extra_mr_, &extra_remote_));
  }
};

const char kValue[8] = {'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'};

// ---------------------------------------------------------------------------------------------
// INVAL

TEST_F(AtomicWriteTest, InvalConnNull) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_atomic_write(nullptr, remote_, 0, kValue, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

TEST_F(AtomicWriteTest, InvalDstNull) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_atomic_write(pair_.client, nullptr, 0, kValue, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
}

TEST_F(AtomicWriteTest, InvalSrcNull) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_atomic_write(pair_.client, remote_, 0, nullptr, RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  ExpectNoCompletion(client_cq_);
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

TEST_F(AtomicWriteTest, InvalFlagsZero) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  EXPECT_EQ(RPMA_E_INVAL, rpma_atomic_write(pair_.client, remote_, 0, kValue, 0, Ctx(1)));
  ExpectNoCompletion(client_cq_);
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

TEST_F(AtomicWriteTest, InvalMisalignedOffset) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  for (size_t offset :
       {size_t{1}, size_t{2}, size_t{4}, size_t{7}, size_t{9}, size_t{12}, size_t{60}, SIZE_MAX}) {
    EXPECT_EQ(RPMA_E_INVAL, rpma_atomic_write(pair_.client, remote_, offset, kValue,
                                              RPMA_F_COMPLETION_ALWAYS, Ctx(offset)))
        << "dst_offset " << offset;
  }
  ExpectNoCompletion(client_cq_);
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

// ---------------------------------------------------------------------------------------------
// Success

TEST_F(AtomicWriteTest, WritesEightBytesAndCompletesAsRdmaWrite) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  ASSERT_EQ(
      0, rpma_atomic_write(pair_.client, remote_, 8, kValue, RPMA_F_COMPLETION_ALWAYS, Ctx(0xA7)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xA7), IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0, memcmp(&words_[1], kValue, 8));
  EXPECT_TRUE(WordsUntouchedExcept(1));
  ExpectNoCompletion(client_cq_);
}

TEST_F(AtomicWriteTest, LastWordOfRegion) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, remote_, kSize - 8, kValue, RPMA_F_COMPLETION_ALWAYS,
                                 nullptr));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, nullptr, IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0, memcmp(&words_[kWords - 1], kValue, 8));
  EXPECT_TRUE(WordsUntouchedExcept(kWords - 1));
}

TEST_F(AtomicWriteTest, NativeCompletesAsAtomicWrite) {
  ScopedCap cap(RPMA_SIM_CAP_NATIVE_ATOMIC_WRITE);
  ASSERT_NO_FATAL_FAILURE(Setup());
  ASSERT_EQ(
      0, rpma_atomic_write(pair_.client, remote_, 16, kValue, RPMA_F_COMPLETION_ALWAYS, Ctx(0xA8)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xA8), IBV_WC_ATOMIC_WRITE));
  EXPECT_EQ(0, memcmp(&words_[2], kValue, 8));
  EXPECT_TRUE(WordsUntouchedExcept(2));
  EXPECT_EQ(9, static_cast<int>(IBV_WC_ATOMIC_WRITE));
}

TEST_F(AtomicWriteTest, CapRestoredMeansPortableAgain) {
  { ScopedCap cap(RPMA_SIM_CAP_NATIVE_ATOMIC_WRITE); }
  ASSERT_NO_FATAL_FAILURE(Setup());
  ASSERT_EQ(
      0, rpma_atomic_write(pair_.client, remote_, 0, kValue, RPMA_F_COMPLETION_ALWAYS, Ctx(0xA9)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xA9), IBV_WC_RDMA_WRITE));
}

TEST_F(AtomicWriteTest, SourceIsCopiedAtPost) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  char src[8];
  memcpy(src, kValue, 8);
  ASSERT_EQ(0,
            rpma_atomic_write(pair_.client, remote_, 24, src, RPMA_F_COMPLETION_ALWAYS, Ctx(0xAA)));
  memset(src, 'Z', sizeof(src));  // reused at once, before the completion
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xAA), IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0, memcmp(&words_[3], kValue, 8));
}

TEST_F(AtomicWriteTest, SourceNeedNotBeAligned) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  char buf[9];
  memcpy(buf + 1, kValue, 8);
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, remote_, 32, buf + 1, RPMA_F_COMPLETION_ALWAYS,
                                 Ctx(0xAB)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xAB), IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0, memcmp(&words_[4], kValue, 8));
}

TEST_F(AtomicWriteTest, OnErrorOnlyGivesNoCompletionOnSuccess) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, remote_, 0, kValue, RPMA_F_COMPLETION_ON_ERROR,
                                 Ctx(0xB1)));
  ASSERT_EQ(
      0, rpma_atomic_write(pair_.client, remote_, 8, kValue, RPMA_F_COMPLETION_ALWAYS, Ctx(0xB2)));
  // Send-queue completions are in order: the first one is the signalled write's.
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xB2), IBV_WC_RDMA_WRITE));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(0, memcmp(&words_[0], kValue, 8));
  EXPECT_EQ(0, memcmp(&words_[1], kValue, 8));
}

TEST_F(AtomicWriteTest, NeverTorn) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  uint64_t* const word = &words_[5];
  std::atomic<bool> done{false};
  std::atomic<uint64_t> torn{0}, seen_a{0}, seen_b{0};
  std::atomic<uint64_t> torn_value{0};
  std::thread reader([&] {
    while (!done.load(std::memory_order_acquire)) {
      uint64_t v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
      if (v == kPatternA) {
        seen_a.fetch_add(1, std::memory_order_relaxed);
      } else if (v == kPatternB) {
        seen_b.fetch_add(1, std::memory_order_relaxed);
      } else if (v != kInitial) {
        torn.fetch_add(1, std::memory_order_relaxed);
        torn_value.store(v, std::memory_order_relaxed);
      }
    }
  });
  int post_failures = 0, completion_failures = 0;
  for (int i = 0; i < 10000; ++i) {
    const uint64_t pattern = (i % 2 == 0) ? kPatternA : kPatternB;
    char src[8];
    memcpy(src, &pattern, 8);
    // Every tenth is signalled and polled, which keeps the send queue (depth 10) moving.
    const bool signalled = i % 10 == 9;
    if (rpma_atomic_write(pair_.client, remote_, 5 * sizeof(uint64_t), src,
                          signalled ? RPMA_F_COMPLETION_ALWAYS : RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(i)) != 0) {
      ++post_failures;
      break;
    }
    if (signalled) {
      ibv_wc wc;
      if (WaitWc(client_cq_, &wc) != 0 || wc.status != IBV_WC_SUCCESS ||
          wc.wr_id != static_cast<uint64_t>(i)) {
        ++completion_failures;
        break;
      }
    }
  }
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(0, post_failures);
  EXPECT_EQ(0, completion_failures);
  EXPECT_EQ(0u, torn.load()) << "torn value seen: 0x" << std::hex << torn_value.load();
  EXPECT_EQ(kPatternB, __atomic_load_n(word, __ATOMIC_SEQ_CST));  // the last one written
  EXPECT_TRUE(WordsUntouchedExcept(5));
  ExpectNoCompletion(client_cq_);
}

TEST_F(AtomicWriteTest, PortablePathToMisalignedRegionIsAPlainWrite) {
  // librpma checks only dst_offset % 8. The emulated atomic write is an 8-byte inline
  // IBV_WR_RDMA_WRITE, which has no alignment requirement at the NIC.
  ASSERT_NO_FATAL_FAILURE(Setup());
  std::vector<uint64_t> backing;
  ASSERT_NO_FATAL_FAILURE(RegisterMisalignedRegion(&backing));
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, extra_remote_, 8, kValue, RPMA_F_COMPLETION_ALWAYS,
                                 Ctx(0xD1)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_SUCCESS, Ctx(0xD1), IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0, memcmp(reinterpret_cast<uint8_t*>(backing.data()) + 4 + 8, kValue, 8));
}

TEST_F(AtomicWriteTest, NativePathToMisalignedAddressIsInvalidRequest) {
  // IBV_WR_ATOMIC_WRITE needs a naturally aligned remote address (like every IB atomic).
  ScopedCap cap(RPMA_SIM_CAP_NATIVE_ATOMIC_WRITE);
  ASSERT_NO_FATAL_FAILURE(Setup());
  std::vector<uint64_t> backing;
  ASSERT_NO_FATAL_FAILURE(RegisterMisalignedRegion(&backing));
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, extra_remote_, 8, kValue, RPMA_F_COMPLETION_ALWAYS,
                                 Ctx(0xD2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_INV_REQ_ERR, Ctx(0xD2), IBV_WC_ATOMIC_WRITE));
  for (uint64_t word : backing) EXPECT_EQ(kInitial, word);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST_F(AtomicWriteTest, RegionWithoutWriteDstIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Setup(0xFF & ~RPMA_MR_USAGE_WRITE_DST));
  ASSERT_EQ(
      0, rpma_atomic_write(pair_.client, remote_, 0, kValue, RPMA_F_COMPLETION_ALWAYS, Ctx(0xC1)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xC1), IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

TEST_F(AtomicWriteTest, OutOfBoundsIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, remote_, kSize, kValue, RPMA_F_COMPLETION_ON_ERROR,
                                 Ctx(0xC2)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xC2), IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

TEST_F(AtomicWriteTest, OffsetOverflowIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  // Aligned, and raddr + offset wraps to raddr - 8.
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, remote_, SIZE_MAX - 7, kValue,
                                 RPMA_F_COMPLETION_ALWAYS, Ctx(0xC3)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xC3), IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

TEST_F(AtomicWriteTest, WrongRkeyIsRemoteAccessError) {
  ASSERT_NO_FATAL_FAILURE(Setup());
  std::vector<uint8_t> forged = desc_;
  uint32_t rkey =
      forged[16] | forged[17] << 8 | forged[18] << 16 | static_cast<uint32_t>(forged[19]) << 24;
  rkey += 1;
  for (int i = 0; i < 4; ++i) forged[16 + i] = static_cast<uint8_t>(rkey >> (8 * i));
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(forged.data(), forged.size(), &extra_remote_));
  regs_.Keep(extra_remote_);
  ASSERT_EQ(0, rpma_atomic_write(pair_.client, extra_remote_, 0, kValue, RPMA_F_COMPLETION_ALWAYS,
                                 Ctx(0xC4)));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletion(IBV_WC_REM_ACCESS_ERR, Ctx(0xC4), IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(WordsUntouchedExcept(kWords));
}

}  // namespace
