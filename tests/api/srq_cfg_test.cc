// Tests of the 6 rpma_srq_cfg functions: defaults (20/20, the code wins over the man page's
// 100/100), NULL checks, round trips.
#include <librpma.h>

#include <climits>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

class SrqCfgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, rpma_srq_cfg_new(&cfg_));
    ASSERT_NE(nullptr, cfg_);
  }
  void TearDown() override { EXPECT_EQ(0, rpma_srq_cfg_delete(&cfg_)); }

  struct rpma_srq_cfg* cfg_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// rpma_srq_cfg_new / rpma_srq_cfg_delete
// ---------------------------------------------------------------------------------------------

TEST(SrqCfgNew, NullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_srq_cfg_new(nullptr)); }

TEST(SrqCfgNew, SucceedsAndDeleteNulls) {
  ASSERT_NO_FATAL_FAILURE(ExpectNewThenDeleteNulls(rpma_srq_cfg_new, rpma_srq_cfg_delete));
}

TEST(SrqCfgDelete, NullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_srq_cfg_delete(nullptr)); }

TEST(SrqCfgDelete, NullObjectReturnsZero) {
  ExpectDeleteOfNullObjectReturnsZero(rpma_srq_cfg_delete);
}

TEST(SrqCfgNew, TwoCfgsAreIndependent) {
  struct rpma_srq_cfg* cfg1 = nullptr;
  struct rpma_srq_cfg* cfg2 = nullptr;
  ASSERT_EQ(0, rpma_srq_cfg_new(&cfg1));
  ASSERT_EQ(0, rpma_srq_cfg_new(&cfg2));
  EXPECT_NE(cfg1, cfg2);
  EXPECT_EQ(0, rpma_srq_cfg_set_rq_size(cfg1, 3));
  EXPECT_EQ(0, rpma_srq_cfg_set_rcq_size(cfg1, 4));
  uint32_t rq_size = 0;
  uint32_t rcq_size = 0;
  EXPECT_EQ(0, rpma_srq_cfg_get_rq_size(cfg2, &rq_size));
  EXPECT_EQ(0, rpma_srq_cfg_get_rcq_size(cfg2, &rcq_size));
  EXPECT_EQ(20u, rq_size);
  EXPECT_EQ(20u, rcq_size);
  EXPECT_EQ(0, rpma_srq_cfg_delete(&cfg1));
  EXPECT_EQ(0, rpma_srq_cfg_delete(&cfg2));
}

// ---------------------------------------------------------------------------------------------
// rq_size and rcq_size: the same tests for each field
// ---------------------------------------------------------------------------------------------

struct SrqU32Field {
  const char* name;
  int (*set)(struct rpma_srq_cfg*, uint32_t);
  int (*get)(const struct rpma_srq_cfg*, uint32_t*);
  int (*other_get)(const struct rpma_srq_cfg*, uint32_t*);
};

const SrqU32Field kSrqFields[] = {
    {"RqSize", rpma_srq_cfg_set_rq_size, rpma_srq_cfg_get_rq_size, rpma_srq_cfg_get_rcq_size},
    {"RcqSize", rpma_srq_cfg_set_rcq_size, rpma_srq_cfg_get_rcq_size, rpma_srq_cfg_get_rq_size},
};

class SrqCfgU32Test : public SrqCfgTest, public ::testing::WithParamInterface<SrqU32Field> {
 protected:
  uint32_t Get() {
    uint32_t value = 0xDEADBEEF;
    EXPECT_EQ(0, GetParam().get(cfg_, &value));
    return value;
  }
  void RoundTrip(uint32_t value) {
    EXPECT_EQ(0, GetParam().set(cfg_, value));
    EXPECT_EQ(value, Get());
  }
};

// librpma's code: RPMA_DEFAULT_SRQ_SIZE 20 for both (the man page says 100).
TEST_P(SrqCfgU32Test, DefaultIs20) { EXPECT_EQ(20u, Get()); }

TEST_P(SrqCfgU32Test, SetNullCfgIsInval) { EXPECT_EQ(RPMA_E_INVAL, GetParam().set(nullptr, 5)); }

TEST_P(SrqCfgU32Test, GetNullCfgIsInval) {
  uint32_t value = 0;
  EXPECT_EQ(RPMA_E_INVAL, GetParam().get(nullptr, &value));
}

TEST_P(SrqCfgU32Test, GetNullOutIsInval) { EXPECT_EQ(RPMA_E_INVAL, GetParam().get(cfg_, nullptr)); }

TEST_P(SrqCfgU32Test, GetBothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, GetParam().get(nullptr, nullptr));
}

TEST_P(SrqCfgU32Test, RoundTripZero) { RoundTrip(0); }

TEST_P(SrqCfgU32Test, RoundTripOne) { RoundTrip(1); }

TEST_P(SrqCfgU32Test, RoundTripHundred) { RoundTrip(100); }

TEST_P(SrqCfgU32Test, RoundTripIntMaxPlusOne) { RoundTrip(static_cast<uint32_t>(INT_MAX) + 1u); }

TEST_P(SrqCfgU32Test, RoundTripUint32Max) { RoundTrip(UINT32_MAX); }

TEST_P(SrqCfgU32Test, LastSetWins) {
  EXPECT_EQ(0, GetParam().set(cfg_, 7));
  EXPECT_EQ(0, GetParam().set(cfg_, 3));
  EXPECT_EQ(3u, Get());
}

TEST_P(SrqCfgU32Test, SetLeavesOtherFieldAlone) {
  ASSERT_EQ(0, GetParam().set(cfg_, 12345));
  uint32_t other = 0xDEADBEEF;
  EXPECT_EQ(0, GetParam().other_get(cfg_, &other));
  EXPECT_EQ(20u, other);
}

INSTANTIATE_TEST_SUITE_P(Fields, SrqCfgU32Test, ::testing::ValuesIn(kSrqFields),
                         [](const ::testing::TestParamInfo<SrqU32Field>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
