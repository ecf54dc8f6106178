// mr_remote_test.cc -- remote memory regions: rpma_mr_remote_from_descriptor on hand-made
// descriptors, rpma_mr_remote_get_size/get_flush_type/delete.
#include <librpma.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

constexpr size_t kDescSize = 21;  // LE u64 address, LE u64 length, LE u32 rkey, u8 usage
constexpr int kFlushBits =
    RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;

void StoreLe(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i, v >>= 8) p[i] = static_cast<uint8_t>(v & 0xFF);
}

// A descriptor built by hand, the way a remote side would send it.
std::vector<uint8_t> MakeDescriptor(uint64_t addr, uint64_t len, uint32_t rkey, uint8_t usage,
                                    size_t total_size = kDescSize) {
  std::vector<uint8_t> desc(total_size, 0);
  StoreLe(&desc[0], addr, 8);
  StoreLe(&desc[8], len, 8);
  StoreLe(&desc[16], rkey, 4);
  desc[20] = usage;
  return desc;
}

// ---------------------------------------------------------------------------------------------
// rpma_mr_remote_from_descriptor
// ---------------------------------------------------------------------------------------------

TEST(MrRemoteFromDescriptor, NullDescIsInval) {
  struct rpma_mr_remote* remote = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(nullptr, kDescSize, &remote));
}

TEST(MrRemoteFromDescriptor, NullMrPtrIsInval) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, RPMA_MR_USAGE_READ_SRC);
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(desc.data(), kDescSize, nullptr));
}

TEST(MrRemoteFromDescriptor, AllNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(nullptr, 0, nullptr));
}

TEST(MrRemoteFromDescriptor, Size20IsInval) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, RPMA_MR_USAGE_READ_SRC);
  struct rpma_mr_remote* remote = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(desc.data(), kDescSize - 1, &remote));
}

TEST(MrRemoteFromDescriptor, Size0IsInval) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, RPMA_MR_USAGE_READ_SRC);
  struct rpma_mr_remote* remote = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(desc.data(), 0, &remote));
}

TEST(MrRemoteFromDescriptor, Size1IsInval) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, RPMA_MR_USAGE_READ_SRC);
  struct rpma_mr_remote* remote = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(desc.data(), 1, &remote));
}

// The man page says NOSUPP here; the code (our contract) says INVAL.
TEST(MrRemoteFromDescriptor, UsageZeroIsInval) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, 0);
  struct rpma_mr_remote* remote = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(desc.data(), kDescSize, &remote));
}

TEST(MrRemoteFromDescriptor, UsageZeroInLargerDescriptorIsInval) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, 0, 64);
  desc[21] = 0xFF;  // trailing bytes do not count as usage
  struct rpma_mr_remote* remote = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_from_descriptor(desc.data(), desc.size(), &remote));
}

TEST(MrRemoteFromDescriptor, Size21Succeeds) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, RPMA_MR_USAGE_READ_SRC);
  struct rpma_mr_remote* remote = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), kDescSize, &remote));
  EXPECT_NE(nullptr, remote);
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
  EXPECT_EQ(nullptr, remote);
}

TEST(MrRemoteFromDescriptor, Size64SucceedsAndIgnoresTail) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 12345, 7, RPMA_MR_USAGE_WRITE_DST, 64);
  for (size_t i = kDescSize; i < desc.size(); ++i) desc[i] = 0xEE;
  struct rpma_mr_remote* remote = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), desc.size(), &remote));
  size_t size = 0;
  EXPECT_EQ(0, rpma_mr_remote_get_size(remote, &size));
  EXPECT_EQ(12345u, size);
  int flush_type = -1;
  EXPECT_EQ(0, rpma_mr_remote_get_flush_type(remote, &flush_type));
  EXPECT_EQ(0, flush_type);
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
}

TEST(MrRemoteFromDescriptor, HandMadeDescriptorDecodes) {
  std::vector<uint8_t> desc =
      MakeDescriptor(0x123456789ABCDEF0ull, 0x0000000100000001ull, 0xDEADBEEF, kFlushBits);
  struct rpma_mr_remote* remote = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), kDescSize, &remote));
  size_t size = 0;
  EXPECT_EQ(0, rpma_mr_remote_get_size(remote, &size));
  EXPECT_EQ(static_cast<size_t>(0x0000000100000001ull), size);
  int flush_type = -1;
  EXPECT_EQ(0, rpma_mr_remote_get_flush_type(remote, &flush_type));
  EXPECT_EQ(kFlushBits, flush_type);
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
}

// The descriptor is copied: changing it afterwards does not change the remote MR.
TEST(MrRemoteFromDescriptor, DescriptorIsCopied) {
  std::vector<uint8_t> desc = MakeDescriptor(0x1000, 4096, 7, RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
  struct rpma_mr_remote* remote = nullptr;
  ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), kDescSize, &remote));
  std::fill(desc.begin(), desc.end(), 0);
  size_t size = 0;
  EXPECT_EQ(0, rpma_mr_remote_get_size(remote, &size));
  EXPECT_EQ(4096u, size);
  int flush_type = -1;
  EXPECT_EQ(0, rpma_mr_remote_get_flush_type(remote, &flush_type));
  EXPECT_EQ(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, flush_type);
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote));
}

// ---------------------------------------------------------------------------------------------
// rpma_mr_remote_get_size / rpma_mr_remote_get_flush_type / rpma_mr_remote_delete
// ---------------------------------------------------------------------------------------------

class MrRemoteTest : public ::testing::Test {
 protected:
  void Make(uint8_t usage) {
    std::vector<uint8_t> desc = MakeDescriptor(0x4000, 777, 42, usage);
    ASSERT_EQ(0, rpma_mr_remote_from_descriptor(desc.data(), kDescSize, &remote_));
    ASSERT_NE(nullptr, remote_);
  }
  void TearDown() override { EXPECT_EQ(0, rpma_mr_remote_delete(&remote_)); }

  int FlushType() {
    int flush_type = -1;
    EXPECT_EQ(0, rpma_mr_remote_get_flush_type(remote_, &flush_type));
    return flush_type;
  }

  struct rpma_mr_remote* remote_ = nullptr;
};

TEST_F(MrRemoteTest, GetSizeNullMrIsInval) {
  size_t size = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_get_size(nullptr, &size));
}

TEST_F(MrRemoteTest, GetSizeNullOutIsInval) {
  Make(RPMA_MR_USAGE_READ_SRC);
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_get_size(remote_, nullptr));
}

TEST_F(MrRemoteTest, GetSizeBothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_get_size(nullptr, nullptr));
}

TEST_F(MrRemoteTest, GetSizeReturnsDescriptorLength) {
  Make(RPMA_MR_USAGE_READ_SRC);
  size_t size = 0;
  EXPECT_EQ(0, rpma_mr_remote_get_size(remote_, &size));
  EXPECT_EQ(777u, size);
}

TEST_F(MrRemoteTest, GetFlushTypeNullMrIsInval) {
  int flush_type = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_get_flush_type(nullptr, &flush_type));
}

TEST_F(MrRemoteTest, GetFlushTypeNullOutIsInval) {
  Make(RPMA_MR_USAGE_READ_SRC);
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_get_flush_type(remote_, nullptr));
}

TEST_F(MrRemoteTest, GetFlushTypeBothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_get_flush_type(nullptr, nullptr));
}

TEST_F(MrRemoteTest, FlushTypeVisibility) {
  Make(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY);
  EXPECT_EQ(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, FlushType());
}

TEST_F(MrRemoteTest, FlushTypePersistent) {
  Make(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT);
  EXPECT_EQ(RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, FlushType());
}

TEST_F(MrRemoteTest, FlushTypeBoth) {
  Make(kFlushBits);
  EXPECT_EQ(kFlushBits, FlushType());
}

TEST_F(MrRemoteTest, FlushTypeNoneForNonFlushUsage) {
  Make(RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC |
       RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_SEND | RPMA_MR_USAGE_RECV);
  EXPECT_EQ(0, FlushType());
}

TEST_F(MrRemoteTest, FlushTypeMasksOtherBits) {
  Make(0xFF);
  EXPECT_EQ(kFlushBits, FlushType());
}

TEST_F(MrRemoteTest, FlushTypeVisibilityWithOthers) {
  Make(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY | RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_RECV);
  EXPECT_EQ(RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY, FlushType());
}

TEST_F(MrRemoteTest, DeleteNullPtrIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_mr_remote_delete(nullptr));
}

TEST_F(MrRemoteTest, DeleteNullObjectReturnsZero) {
  ExpectDeleteOfNullObjectReturnsZero(rpma_mr_remote_delete);
}

TEST_F(MrRemoteTest, DeleteSucceedsAndNulls) {
  Make(RPMA_MR_USAGE_READ_SRC);
  EXPECT_EQ(0, rpma_mr_remote_delete(&remote_));
  EXPECT_EQ(nullptr, remote_);
}

}  // namespace
