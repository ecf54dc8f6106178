// read_write_test.cc -- rpma_read, rpma_write, rpma_write_with_imm: INVAL rules, bytes, 0-byte
// forms, signalling, immediate data.
#include <arpa/inet.h>
#include <librpma.h>
#include <string.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kRegionSize = 4096;
constexpr uint8_t kUntouched = 0xEE;
constexpr uint32_t kImm = 0xDEADBEEF;

void Fill(std::vector<uint8_t>* buf, uint8_t seed) {
  for (size_t i = 0; i < buf->size(); ++i) (*buf)[i] = static_cast<uint8_t>(seed + i * 7);
}

bool AllEqual(const uint8_t* p, size_t n, uint8_t value) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != value) return false;
  return true;
}

// One established pair, a target region on the server side (remote view on the client side) and
// a local region on the client side. Everything is released in TearDown.
class ReadWriteTest : public PairFixture {
 protected:
  // ConnectPair(); the target (server) region gets `target_usage`, the local (client) one
  // `local_usage`. The target is filled with kUntouched, the local region with a pattern.
  void Setup(int target_usage, int local_usage) {
    ASSERT_NO_FATAL_FAILURE(ConnectPair());
    target_.assign(kRegionSize, kUntouched);
    local_.resize(kRegionSize);
    Fill(&local_, 3);
    ASSERT_NO_FATAL_FAILURE(Register(target_.data(), target_.size(), target_usage, &target_mr_));
    ASSERT_NO_FATAL_FAILURE(RemoteOf(target_mr_, &remote_));
    ASSERT_NO_FATAL_FAILURE(Register(local_.data(), local_.size(), local_usage, &local_mr_));
  }

  void Register(void* ptr, size_t size, int usage, rpma_mr_local** mr) {
    regs_.Register(pair_.peer, ptr, size, usage, mr);
  }

  // The remote view of `mr`, decoded from its descriptor as a client would.
  void RemoteOf(rpma_mr_local* mr, rpma_mr_remote** remote) { regs_.RemoteOf(mr, remote); }

  // Posts a 1-byte receive on the server connection (for write_with_imm).
  void PostServerRecv(const void* ctx) {
    recv_buf_[0] = 0x5A;
    if (recv_mr_ == nullptr) {
      ASSERT_NO_FATAL_FAILURE(Register(recv_buf_, 1, RPMA_MR_USAGE_RECV, &recv_mr_));
    }
    ASSERT_EQ(0, rpma_recv(pair_.server, recv_mr_, 0, 1, ctx));
  }

  void ExpectSuccess(rpma_cq* cq, const void* ctx, ibv_wc_opcode opcode, ibv_wc* out = nullptr) {
    ExpectCompletion(cq, reinterpret_cast<uint64_t>(ctx), IBV_WC_SUCCESS, opcode, out);
  }

  std::vector<uint8_t> target_;
  std::vector<uint8_t> local_;
  rpma_mr_local* target_mr_ = nullptr;
  rpma_mr_remote* remote_ = nullptr;
  rpma_mr_local* local_mr_ = nullptr;
  uint8_t recv_buf_[1] = {0x5A};
  rpma_mr_local* recv_mr_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// INVAL rules, the same for the three functions.

enum class Op { kRead, kWrite, kWriteWithImm };

// Calls the function under test with (local, local_offset) and (remote, remote_offset) mapped to
// its own argument order.
int PostOp(Op op, rpma_conn* conn, rpma_mr_local* local, size_t local_offset,
           rpma_mr_remote* remote, size_t remote_offset, size_t len, int flags, const void* ctx) {
  switch (op) {
    case Op::kRead:
      return rpma_read(conn, local, local_offset, remote, remote_offset, len, flags, ctx);
    case Op::kWrite:
      return rpma_write(conn, remote, remote_offset, local, local_offset, len, flags, ctx);
    case Op::kWriteWithImm:
      return rpma_write_with_imm(conn, remote, remote_offset, local, local_offset, len, flags, kImm,
                                 ctx);
  }
  return 1;
}

class ReadWriteInvalTest : public ReadWriteTest, public ::testing::WithParamInterface<Op> {
 protected:
  // Nothing was posted: no completion on either side, target and local bytes unchanged.
  void ExpectNothingHappened() {
    ExpectNoCompletion(client_cq_);
    ExpectNoCompletion(server_cq_);
    EXPECT_TRUE(AllEqual(target_.data(), target_.size(), kUntouched));
    std::vector<uint8_t> pattern(kRegionSize);
    Fill(&pattern, 3);
    EXPECT_EQ(pattern, local_);
  }
  static constexpr int kUsage = RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST;
  static constexpr int kLocalUsage = RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC;
};

TEST_P(ReadWriteInvalTest, ConnNull) {
  ASSERT_NO_FATAL_FAILURE(Setup(kUsage, kLocalUsage));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), nullptr, local_mr_, 0, remote_, 0, 8,
                                 RPMA_F_COMPLETION_ALWAYS, Ctx(1)));
  // The 0-byte form does not save a NULL conn either.
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), nullptr, nullptr, 0, nullptr, 0, 0,
                                 RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ExpectNothingHappened();
}

TEST_P(ReadWriteInvalTest, FlagsZero) {
  ASSERT_NO_FATAL_FAILURE(Setup(kUsage, kLocalUsage));
  if (GetParam() == Op::kWriteWithImm) {
    ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(99)));
  }
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), pair_.client, local_mr_, 0, remote_, 0, 8, 0, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), pair_.client, nullptr, 0, nullptr, 0, 0, 0, Ctx(2)));
  ExpectNothingHappened();
}

TEST_P(ReadWriteInvalTest, OneRegionNull) {
  ASSERT_NO_FATAL_FAILURE(Setup(kUsage, kLocalUsage));
  if (GetParam() == Op::kWriteWithImm) {
    ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(99)));
  }
  const int flags = RPMA_F_COMPLETION_ALWAYS;
  rpma_conn* conn = pair_.client;
  // local NULL, remote given: with all zeros and with non-zero offsets / length
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, 0, remote_, 0, 0, flags, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, 0, remote_, 0, 8, flags, Ctx(2)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, 16, remote_, 16, 8, flags, Ctx(3)));
  // remote NULL, local given
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, local_mr_, 0, nullptr, 0, 0, flags, Ctx(4)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, local_mr_, 0, nullptr, 0, 8, flags, Ctx(5)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, local_mr_, 16, nullptr, 16, 8, flags, Ctx(6)));
  // the same with ON_ERROR only
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, 0, remote_, 0, 8,
                                 RPMA_F_COMPLETION_ON_ERROR, Ctx(7)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, local_mr_, 0, nullptr, 0, 8,
                                 RPMA_F_COMPLETION_ON_ERROR, Ctx(8)));
  ExpectNothingHappened();
}

TEST_P(ReadWriteInvalTest, BothRegionsNullWithNonZeroOffsetOrLength) {
  ASSERT_NO_FATAL_FAILURE(Setup(kUsage, kLocalUsage));
  if (GetParam() == Op::kWriteWithImm) {
    ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(99)));
  }
  const int flags = RPMA_F_COMPLETION_ALWAYS;
  rpma_conn* conn = pair_.client;
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, 1, nullptr, 0, 0, flags, Ctx(1)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, 0, nullptr, 1, 0, flags, Ctx(2)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, 0, nullptr, 0, 1, flags, Ctx(3)));
  EXPECT_EQ(RPMA_E_INVAL, PostOp(GetParam(), conn, nullptr, SIZE_MAX, nullptr, SIZE_MAX, SIZE_MAX,
                                 flags, Ctx(4)));
  ExpectNothingHappened();
}

INSTANTIATE_TEST_SUITE_P(Ops, ReadWriteInvalTest,
                         ::testing::Values(Op::kRead, Op::kWrite, Op::kWriteWithImm),
                         [](const ::testing::TestParamInfo<Op>& info) {
                           switch (info.param) {
                             case Op::kRead:
                               return "Read";
                             case Op::kWrite:
                               return "Write";
                             case Op::kWriteWithImm:
                               return "WriteWithImm";
                           }
                           return "Unknown";
                         });

// ---------------------------------------------------------------------------------------------
// rpma_write

TEST_F(ReadWriteTest, WritePlacesExactBytesAtOffset) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  const size_t src_off = 17, dst_off = 300, len = 100;
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, dst_off, local_mr_, src_off, len,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(0xC0FFEE)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xC0FFEE), IBV_WC_RDMA_WRITE, &wc));
  EXPECT_EQ(client_qp_num_, wc.qp_num);
  EXPECT_EQ(0, memcmp(target_.data() + dst_off, local_.data() + src_off, len));
  EXPECT_TRUE(AllEqual(target_.data(), dst_off, kUntouched));
  EXPECT_TRUE(AllEqual(target_.data() + dst_off + len, kRegionSize - dst_off - len, kUntouched));
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);  // one-sided: nothing for the target
}

TEST_F(ReadWriteTest, WriteWholeRegion) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, kRegionSize,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(7)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(7), IBV_WC_RDMA_WRITE));
  EXPECT_EQ(local_, target_);
}

TEST_F(ReadWriteTest, WriteLastByteOfRegion) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, kRegionSize - 1, local_mr_, kRegionSize - 1, 1,
                          RPMA_F_COMPLETION_ALWAYS, Ctx(8)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(8), IBV_WC_RDMA_WRITE));
  EXPECT_EQ(local_[kRegionSize - 1], target_[kRegionSize - 1]);
  EXPECT_TRUE(AllEqual(target_.data(), kRegionSize - 1, kUntouched));
}

TEST_F(ReadWriteTest, WriteNullOpContextGivesWrIdZero) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_EQ(
      0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 8, RPMA_F_COMPLETION_ALWAYS, nullptr));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, nullptr, IBV_WC_RDMA_WRITE));
}

TEST_F(ReadWriteTest, WriteZeroBytes) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_EQ(
      0, rpma_write(pair_.client, nullptr, 0, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(0x42)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0x42), IBV_WC_RDMA_WRITE));
  EXPECT_TRUE(AllEqual(target_.data(), target_.size(), kUntouched));
  ExpectNoCompletion(server_cq_);
}

TEST_F(ReadWriteTest, WriteOnErrorOnlyGivesNoCompletionOnSuccess) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC,
                                RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 64, RPMA_F_COMPLETION_ON_ERROR,
                          Ctx(1)));
  ASSERT_EQ(
      0, rpma_write(pair_.client, nullptr, 0, nullptr, 0, 0, RPMA_F_COMPLETION_ON_ERROR, Ctx(2)));
  // A signalled read behind them: send-queue completions come in order, so the first completion
  // would be a write's if the unsignalled writes had produced one.
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 1024, remote_, 0, 64, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(3)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(3), IBV_WC_RDMA_READ));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(0, memcmp(target_.data(), local_.data(), 64));
  EXPECT_EQ(0, memcmp(local_.data() + 1024, local_.data(), 64));  // read back what was written
}

TEST_F(ReadWriteTest, WriteOnErrorOnlyGivesCompletionOnError) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  // One byte past the end of the remote region.
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, kRegionSize - 4, local_mr_, 0, 8,
                          RPMA_F_COMPLETION_ON_ERROR, Ctx(0xBAD)));
  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(client_cq_, &wc));
  EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
  EXPECT_EQ(0xBADu, wc.wr_id);
  EXPECT_EQ(client_qp_num_, wc.qp_num);
  EXPECT_TRUE(AllEqual(target_.data(), target_.size(), kUntouched));
}

// ---------------------------------------------------------------------------------------------
// rpma_read

TEST_F(ReadWriteTest, ReadFetchesExactBytesAtOffset) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_READ_DST));
  Fill(&target_, 101);
  std::fill(local_.begin(), local_.end(), kUntouched);
  const size_t src_off = 1000, dst_off = 5, len = 123;
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, dst_off, remote_, src_off, len,
                         RPMA_F_COMPLETION_ALWAYS, Ctx(0xFEED)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xFEED), IBV_WC_RDMA_READ, &wc));
  EXPECT_EQ(len, wc.byte_len);
  EXPECT_EQ(client_qp_num_, wc.qp_num);
  EXPECT_EQ(0, memcmp(local_.data() + dst_off, target_.data() + src_off, len));
  EXPECT_TRUE(AllEqual(local_.data(), dst_off, kUntouched));
  EXPECT_TRUE(AllEqual(local_.data() + dst_off + len, kRegionSize - dst_off - len, kUntouched));
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
}

TEST_F(ReadWriteTest, ReadWholeRegion) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_READ_DST));
  Fill(&target_, 55);
  std::fill(local_.begin(), local_.end(), 0);
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, kRegionSize,
                         RPMA_F_COMPLETION_ALWAYS, Ctx(9)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(9), IBV_WC_RDMA_READ, &wc));
  EXPECT_EQ(kRegionSize, wc.byte_len);
  EXPECT_EQ(target_, local_);
}

TEST_F(ReadWriteTest, ReadZeroBytes) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_READ_DST));
  ASSERT_EQ(
      0, rpma_read(pair_.client, nullptr, 0, nullptr, 0, 0, RPMA_F_COMPLETION_ALWAYS, Ctx(0x43)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0x43), IBV_WC_RDMA_READ, &wc));
  EXPECT_EQ(0u, wc.byte_len);
}

TEST_F(ReadWriteTest, ReadOnErrorOnlyGivesNoCompletionOnSuccess) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_READ_DST));
  Fill(&target_, 77);
  ASSERT_EQ(
      0, rpma_read(pair_.client, local_mr_, 0, remote_, 0, 32, RPMA_F_COMPLETION_ON_ERROR, Ctx(1)));
  ASSERT_EQ(
      0, rpma_read(pair_.client, local_mr_, 32, remote_, 32, 32, RPMA_F_COMPLETION_ALWAYS, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(2), IBV_WC_RDMA_READ));
  ExpectNoCompletion(client_cq_);
  EXPECT_EQ(0, memcmp(local_.data(), target_.data(), 64));
}

TEST_F(ReadWriteTest, ReadOnErrorOnlyGivesCompletionOnError) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_READ_SRC, RPMA_MR_USAGE_READ_DST));
  std::vector<uint8_t> before = local_;
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 0, remote_, kRegionSize, 1,
                         RPMA_F_COMPLETION_ON_ERROR, Ctx(0xBAD)));
  ibv_wc wc;
  ASSERT_EQ(0, WaitWc(client_cq_, &wc));
  EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status);
  EXPECT_EQ(0xBADu, wc.wr_id);
  EXPECT_EQ(before, local_);
}

// ---------------------------------------------------------------------------------------------
// rpma_write_with_imm

TEST_F(ReadWriteTest, WriteWithImmDeliversImmAndBytes) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(0xAEC)));
  const size_t src_off = 64, dst_off = 8, len = 64;
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, dst_off, local_mr_, src_off, len,
                                   RPMA_F_COMPLETION_ALWAYS, kImm, Ctx(0x5E4D)));
  ibv_wc wc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0x5E4D), IBV_WC_RDMA_WRITE, &wc));
  EXPECT_EQ(client_qp_num_, wc.qp_num);

  ibv_wc rwc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(server_cq_, Ctx(0xAEC), IBV_WC_RECV_RDMA_WITH_IMM, &rwc));
  EXPECT_TRUE(rwc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(kImm, ntohl(rwc.imm_data));
  EXPECT_EQ(len, rwc.byte_len);
  EXPECT_EQ(server_qp_num_, rwc.qp_num);
  EXPECT_EQ(0x5A, recv_buf_[0]) << "the receive buffer must stay untouched";

  EXPECT_EQ(0, memcmp(target_.data() + dst_off, local_.data() + src_off, len));
  EXPECT_TRUE(AllEqual(target_.data(), dst_off, kUntouched));
  EXPECT_TRUE(AllEqual(target_.data() + dst_off + len, kRegionSize - dst_off - len, kUntouched));
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
}

TEST_F(ReadWriteTest, WriteWithImmImmIsNetworkByteOrder) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(1)));
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 0, local_mr_, 0, 4,
                                   RPMA_F_COMPLETION_ALWAYS, 0x01020304u, Ctx(2)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(2), IBV_WC_RDMA_WRITE));
  ibv_wc rwc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(server_cq_, Ctx(1), IBV_WC_RECV_RDMA_WITH_IMM, &rwc));
  EXPECT_EQ(htonl(0x01020304u), rwc.imm_data);
  const uint8_t* raw = reinterpret_cast<const uint8_t*>(&rwc.imm_data);
  EXPECT_EQ(0x01, raw[0]);  // most significant byte first in memory
  EXPECT_EQ(0x04, raw[3]);
}

TEST_F(ReadWriteTest, WriteWithImmZeroBytes) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(0x77)));
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, nullptr, 0, nullptr, 0, 0,
                                   RPMA_F_COMPLETION_ALWAYS, 12345, Ctx(0x78)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0x78), IBV_WC_RDMA_WRITE));
  ibv_wc rwc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(server_cq_, Ctx(0x77), IBV_WC_RECV_RDMA_WITH_IMM, &rwc));
  EXPECT_TRUE(rwc.wc_flags & IBV_WC_WITH_IMM);
  EXPECT_EQ(12345u, ntohl(rwc.imm_data));
  EXPECT_EQ(0u, rwc.byte_len);
  EXPECT_EQ(0x5A, recv_buf_[0]);
  EXPECT_TRUE(AllEqual(target_.data(), target_.size(), kUntouched));
}

TEST_F(ReadWriteTest, WriteWithImmOnErrorOnlyStillCompletesAtTheReceiver) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(0x91)));
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 0, local_mr_, 0, 16,
                                   RPMA_F_COMPLETION_ON_ERROR, 7, Ctx(0x92)));
  ibv_wc rwc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(server_cq_, Ctx(0x91), IBV_WC_RECV_RDMA_WITH_IMM, &rwc));
  EXPECT_EQ(7u, ntohl(rwc.imm_data));
  EXPECT_EQ(16u, rwc.byte_len);
  EXPECT_EQ(0, memcmp(target_.data(), local_.data(), 16));
  // The receive completion implies the write was executed; the sender has nothing to report.
  ExpectNoCompletion(client_cq_);
}

TEST_F(ReadWriteTest, PlainWriteConsumesNoReceive) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(0xA1)));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 8, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0xA2)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xA2), IBV_WC_RDMA_WRITE));
  ExpectNoCompletion(server_cq_);
  // The receive is still there for the next write_with_imm.
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 8, local_mr_, 8, 8,
                                   RPMA_F_COMPLETION_ALWAYS, 1, Ctx(0xA3)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xA3), IBV_WC_RDMA_WRITE));
  ibv_wc rwc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(server_cq_, Ctx(0xA1), IBV_WC_RECV_RDMA_WITH_IMM, &rwc));
  EXPECT_EQ(8u, rwc.byte_len);
  EXPECT_EQ(0, memcmp(target_.data(), local_.data(), 16));
}

TEST_F(ReadWriteTest, WriteWithImmWaitsForAReceive) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  // No receive posted: RNR retry (forever with rnr_retry_count 7), never an error.
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 0, local_mr_, 0, 32,
                                   RPMA_F_COMPLETION_ALWAYS, 0xABCD, Ctx(0xB1)));
  ExpectNoCompletion(client_cq_);
  ExpectNoCompletion(server_cq_);
  ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(0xB2)));
  ibv_wc rwc;
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(server_cq_, Ctx(0xB2), IBV_WC_RECV_RDMA_WITH_IMM, &rwc));
  EXPECT_EQ(0xABCDu, ntohl(rwc.imm_data));
  EXPECT_EQ(32u, rwc.byte_len);
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xB1), IBV_WC_RDMA_WRITE));
  EXPECT_EQ(0, memcmp(target_.data(), local_.data(), 32));
}

TEST_F(ReadWriteTest, LaterWorkWaitsBehindWriteWithImmWithoutReceive) {
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC,
                                RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_READ_DST));
  ASSERT_EQ(0, rpma_write_with_imm(pair_.client, remote_, 0, local_mr_, 0, 16,
                                   RPMA_F_COMPLETION_ALWAYS, 1, Ctx(0xC1)));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 64, local_mr_, 64, 16, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0xC2)));
  ASSERT_EQ(0, rpma_read(pair_.client, local_mr_, 1024, remote_, 64, 16, RPMA_F_COMPLETION_ALWAYS,
                         Ctx(0xC3)));
  // RC ordering: nothing overtakes the write_with_imm that waits for a receive.
  ExpectNoCompletion(client_cq_);
  EXPECT_TRUE(AllEqual(target_.data() + 64, 16, kUntouched));
  ASSERT_NO_FATAL_FAILURE(PostServerRecv(Ctx(0xC0)));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xC1), IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xC2), IBV_WC_RDMA_WRITE));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(client_cq_, Ctx(0xC3), IBV_WC_RDMA_READ));
  ASSERT_NO_FATAL_FAILURE(ExpectSuccess(server_cq_, Ctx(0xC0), IBV_WC_RECV_RDMA_WITH_IMM));
  EXPECT_EQ(0, memcmp(target_.data(), local_.data(), 16));
  EXPECT_EQ(0, memcmp(target_.data() + 64, local_.data() + 64, 16));
  EXPECT_EQ(0, memcmp(local_.data() + 1024, local_.data() + 64, 16));
}

TEST_F(ReadWriteTest, PostWaitThenGetWc) {
  // The single-shot examples' pattern: post, rpma_cq_wait, rpma_cq_get_wc(1).
  ASSERT_NO_FATAL_FAILURE(Setup(RPMA_MR_USAGE_WRITE_DST, RPMA_MR_USAGE_WRITE_SRC));
  int fd = -1;
  ASSERT_EQ(0, rpma_cq_get_fd(client_cq_, &fd));
  ASSERT_EQ(0, rpma_write(pair_.client, remote_, 0, local_mr_, 0, 32, RPMA_F_COMPLETION_ALWAYS,
                          Ctx(0xD1)));
  ASSERT_TRUE(WaitReadable(fd, kSafetyTimeoutMs));  // so a broken wait cannot hang the test
  ASSERT_EQ(0, rpma_cq_wait(client_cq_));
  ibv_wc wc;
  memset(&wc, 0, sizeof(wc));
  int got = 0;
  ASSERT_EQ(0, rpma_cq_get_wc(client_cq_, 1, &wc, &got));
  EXPECT_EQ(1, got);
  EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
  EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
  EXPECT_EQ(0xD1u, wc.wr_id);
  EXPECT_EQ(0, memcmp(target_.data(), local_.data(), 32));
}

}  // namespace
