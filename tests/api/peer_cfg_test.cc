// Tests of the 7 rpma_peer_cfg functions, including the 1-byte peer-cfg descriptor.
#include <librpma.h>

#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

class PeerCfgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, rpma_peer_cfg_new(&cfg_));
    ASSERT_NE(nullptr, cfg_);
  }
  void TearDown() override { EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg_)); }

  struct rpma_peer_cfg* cfg_ = nullptr;
};

bool DirectWrite(const struct rpma_peer_cfg* cfg) {
  bool supported = false;
  EXPECT_EQ(0, rpma_peer_cfg_get_direct_write_to_pmem(cfg, &supported));
  return supported;
}

// ---------------------------------------------------------------------------------------------
// rpma_peer_cfg_new / rpma_peer_cfg_delete
// ---------------------------------------------------------------------------------------------

TEST(PeerCfgNew, NullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_new(nullptr)); }

TEST(PeerCfgNew, SucceedsAndDeleteNulls) {
  ASSERT_NO_FATAL_FAILURE(ExpectNewThenDeleteNulls(rpma_peer_cfg_new, rpma_peer_cfg_delete));
}

TEST(PeerCfgNew, TwoCfgsAreIndependent) {
  struct rpma_peer_cfg* cfg1 = nullptr;
  struct rpma_peer_cfg* cfg2 = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_new(&cfg1));
  ASSERT_EQ(0, rpma_peer_cfg_new(&cfg2));
  EXPECT_NE(cfg1, cfg2);
  EXPECT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg1, true));
  EXPECT_TRUE(DirectWrite(cfg1));
  EXPECT_FALSE(DirectWrite(cfg2));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg1));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg2));
}

TEST(PeerCfgDelete, NullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_delete(nullptr)); }

TEST(PeerCfgDelete, NullObjectReturnsZero) {
  ExpectDeleteOfNullObjectReturnsZero(rpma_peer_cfg_delete);
}

TEST_F(PeerCfgTest, DefaultDirectWriteIsFalse) {
  bool supported = true;
  EXPECT_EQ(0, rpma_peer_cfg_get_direct_write_to_pmem(cfg_, &supported));
  EXPECT_FALSE(supported);
}

// ---------------------------------------------------------------------------------------------
// rpma_peer_cfg_set_direct_write_to_pmem / rpma_peer_cfg_get_direct_write_to_pmem
// ---------------------------------------------------------------------------------------------

TEST(PeerCfgSetDirectWrite, NullCfgTrueIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_set_direct_write_to_pmem(nullptr, true));
}

TEST(PeerCfgSetDirectWrite, NullCfgFalseIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_set_direct_write_to_pmem(nullptr, false));
}

TEST(PeerCfgGetDirectWrite, NullCfgIsInval) {
  bool supported = false;
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_direct_write_to_pmem(nullptr, &supported));
}

TEST_F(PeerCfgTest, GetNullOutIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_direct_write_to_pmem(cfg_, nullptr));
}

TEST(PeerCfgGetDirectWrite, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_direct_write_to_pmem(nullptr, nullptr));
}

TEST_F(PeerCfgTest, SetTrueGetTrue) {
  EXPECT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, true));
  EXPECT_TRUE(DirectWrite(cfg_));
}

TEST_F(PeerCfgTest, SetTrueThenFalseGetFalse) {
  EXPECT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, true));
  EXPECT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, false));
  EXPECT_FALSE(DirectWrite(cfg_));
}

TEST_F(PeerCfgTest, SetFalseGetFalse) {
  EXPECT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, false));
  EXPECT_FALSE(DirectWrite(cfg_));
}

// ---------------------------------------------------------------------------------------------
// rpma_peer_cfg_get_descriptor_size / rpma_peer_cfg_get_descriptor
// ---------------------------------------------------------------------------------------------

TEST(PeerCfgGetDescriptorSize, NullCfgIsInval) {
  size_t size = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_descriptor_size(nullptr, &size));
}

TEST_F(PeerCfgTest, GetDescriptorSizeNullOutIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_descriptor_size(cfg_, nullptr));
}

TEST(PeerCfgGetDescriptorSize, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_descriptor_size(nullptr, nullptr));
}

TEST_F(PeerCfgTest, DescriptorSizeIsOne) {
  size_t size = 0;
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor_size(cfg_, &size));
  EXPECT_EQ(1u, size);
}

TEST_F(PeerCfgTest, DescriptorSizeIsOneWhenTrue) {
  ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, true));
  size_t size = 0;
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor_size(cfg_, &size));
  EXPECT_EQ(1u, size);
}

TEST(PeerCfgGetDescriptor, NullCfgIsInval) {
  uint8_t desc[8] = {};
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_descriptor(nullptr, desc));
}

TEST_F(PeerCfgTest, GetDescriptorNullDescIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_descriptor(cfg_, nullptr));
}

TEST(PeerCfgGetDescriptor, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_get_descriptor(nullptr, nullptr));
}

TEST_F(PeerCfgTest, DescriptorOfDefaultIsZero) {
  uint8_t desc[8];
  memset(desc, 0xAA, sizeof(desc));
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor(cfg_, desc));
  EXPECT_EQ(0, desc[0]);
}

TEST_F(PeerCfgTest, DescriptorOfTrueIsOne) {
  ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, true));
  uint8_t desc[8];
  memset(desc, 0xAA, sizeof(desc));
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor(cfg_, desc));
  EXPECT_EQ(1, desc[0]);
}

TEST_F(PeerCfgTest, DescriptorWritesExactlyOneByte) {
  ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, true));
  uint8_t desc[8];
  memset(desc, 0xAA, sizeof(desc));
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor(cfg_, desc));
  for (size_t i = 1; i < sizeof(desc); ++i) EXPECT_EQ(0xAA, desc[i]) << "byte " << i;
}

// ---------------------------------------------------------------------------------------------
// rpma_peer_cfg_from_descriptor
// ---------------------------------------------------------------------------------------------

TEST(PeerCfgFromDescriptor, NullDescIsInval) {
  struct rpma_peer_cfg* cfg = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_from_descriptor(nullptr, 1, &cfg));
}

TEST(PeerCfgFromDescriptor, NullCfgPtrIsInval) {
  uint8_t desc = 1;
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_from_descriptor(&desc, 1, nullptr));
}

TEST(PeerCfgFromDescriptor, SizeZeroIsInval) {
  uint8_t desc = 1;
  struct rpma_peer_cfg* cfg = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_from_descriptor(&desc, 0, &cfg));
}

TEST(PeerCfgFromDescriptor, AllNullAndSizeZeroIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_peer_cfg_from_descriptor(nullptr, 0, nullptr));
}

TEST(PeerCfgFromDescriptor, ZeroByteIsFalse) {
  uint8_t desc = 0;
  struct rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(&desc, 1, &cfg));
  ASSERT_NE(nullptr, cfg);
  EXPECT_FALSE(DirectWrite(cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

TEST(PeerCfgFromDescriptor, OneByteIsTrue) {
  uint8_t desc = 1;
  struct rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(&desc, 1, &cfg));
  ASSERT_NE(nullptr, cfg);
  EXPECT_TRUE(DirectWrite(cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

TEST(PeerCfgFromDescriptor, NonZeroByte0x7fIsTrue) {
  uint8_t desc = 0x7f;
  struct rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(&desc, 1, &cfg));
  ASSERT_NE(nullptr, cfg);
  EXPECT_TRUE(DirectWrite(cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

TEST(PeerCfgFromDescriptor, NonZeroByte0xffIsTrue) {
  uint8_t desc = 0xff;
  struct rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(&desc, 1, &cfg));
  ASSERT_NE(nullptr, cfg);
  EXPECT_TRUE(DirectWrite(cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

// A non-zero byte re-encodes as exactly 1.
TEST(PeerCfgFromDescriptor, NonZeroByteReencodesAsOne) {
  uint8_t desc = 0x7f;
  struct rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(&desc, 1, &cfg));
  uint8_t out = 0xAA;
  EXPECT_EQ(0, rpma_peer_cfg_get_descriptor(cfg, &out));
  EXPECT_EQ(1, out);
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

TEST(PeerCfgFromDescriptor, LargerSizeIsAcceptedAndReadsFirstByte) {
  uint8_t desc[64];
  memset(desc, 0, sizeof(desc));
  desc[0] = 1;
  struct rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(desc, sizeof(desc), &cfg));
  ASSERT_NE(nullptr, cfg);
  EXPECT_TRUE(DirectWrite(cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

TEST(PeerCfgFromDescriptor, LargerSizeIgnoresTrailingBytes) {
  uint8_t desc[64];
  memset(desc, 0xff, sizeof(desc));
  desc[0] = 0;
  struct rpma_peer_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(desc, sizeof(desc), &cfg));
  ASSERT_NE(nullptr, cfg);
  EXPECT_FALSE(DirectWrite(cfg));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&cfg));
}

TEST_F(PeerCfgTest, DescriptorRoundTripTrue) {
  ASSERT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(cfg_, true));
  size_t size = 0;
  ASSERT_EQ(0, rpma_peer_cfg_get_descriptor_size(cfg_, &size));
  uint8_t desc[8] = {};
  ASSERT_EQ(0, rpma_peer_cfg_get_descriptor(cfg_, desc));
  struct rpma_peer_cfg* copy = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(desc, size, &copy));
  EXPECT_TRUE(DirectWrite(copy));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&copy));
}

TEST_F(PeerCfgTest, DescriptorRoundTripFalse) {
  size_t size = 0;
  ASSERT_EQ(0, rpma_peer_cfg_get_descriptor_size(cfg_, &size));
  uint8_t desc[8] = {0xAA};
  ASSERT_EQ(0, rpma_peer_cfg_get_descriptor(cfg_, desc));
  struct rpma_peer_cfg* copy = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(desc, size, &copy));
  EXPECT_FALSE(DirectWrite(copy));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&copy));
}

// The new cfg is a separate object: changing it leaves the source unchanged.
TEST_F(PeerCfgTest, FromDescriptorMakesIndependentCfg) {
  uint8_t desc = 0;
  struct rpma_peer_cfg* copy = nullptr;
  ASSERT_EQ(0, rpma_peer_cfg_from_descriptor(&desc, 1, &copy));
  EXPECT_NE(cfg_, copy);
  EXPECT_EQ(0, rpma_peer_cfg_set_direct_write_to_pmem(copy, true));
  EXPECT_FALSE(DirectWrite(cfg_));
  EXPECT_EQ(0, rpma_peer_cfg_delete(&copy));
}

}  // namespace
