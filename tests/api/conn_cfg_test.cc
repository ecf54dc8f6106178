// Tests of the 16 rpma_conn_cfg functions: defaults, NULL checks, set/get round trips, the SRQ
// setting.
#include <librpma.h>

#include <climits>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "tests/common/test_support.h"

namespace {

class ConnCfgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(0, rpma_conn_cfg_new(&cfg_));
    ASSERT_NE(nullptr, cfg_);
  }
  void TearDown() override { EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg_)); }

  int Timeout() {
    int timeout_ms = -1;
    EXPECT_EQ(0, rpma_conn_cfg_get_timeout(cfg_, &timeout_ms));
    return timeout_ms;
  }

  struct rpma_conn_cfg* cfg_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// rpma_conn_cfg_new / rpma_conn_cfg_delete
// ---------------------------------------------------------------------------------------------

TEST(ConnCfgNew, NullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_new(nullptr)); }

TEST(ConnCfgNew, SucceedsAndDeleteNulls) {
  ASSERT_NO_FATAL_FAILURE(ExpectNewThenDeleteNulls(rpma_conn_cfg_new, rpma_conn_cfg_delete));
}

TEST(ConnCfgDelete, NullPtrIsInval) { EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_delete(nullptr)); }

TEST(ConnCfgDelete, NullObjectReturnsZero) {
  ExpectDeleteOfNullObjectReturnsZero(rpma_conn_cfg_delete);
}

TEST(ConnCfgNew, TwoCfgsAreIndependent) {
  struct rpma_conn_cfg* cfg1 = nullptr;
  struct rpma_conn_cfg* cfg2 = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg1));
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg2));
  EXPECT_NE(cfg1, cfg2);
  EXPECT_EQ(0, rpma_conn_cfg_set_timeout(cfg1, 5));
  EXPECT_EQ(0, rpma_conn_cfg_set_cq_size(cfg1, 5));
  int timeout_ms = -1;
  uint32_t cq_size = 0;
  EXPECT_EQ(0, rpma_conn_cfg_get_timeout(cfg2, &timeout_ms));
  EXPECT_EQ(0, rpma_conn_cfg_get_cq_size(cfg2, &cq_size));
  EXPECT_EQ(RPMA_DEFAULT_TIMEOUT_MS, timeout_ms);
  EXPECT_EQ(10u, cq_size);
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg1));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg2));
}

// ---------------------------------------------------------------------------------------------
// timeout
// ---------------------------------------------------------------------------------------------

TEST_F(ConnCfgTest, DefaultTimeoutIs1000) {
  EXPECT_EQ(1000, Timeout());
  EXPECT_EQ(RPMA_DEFAULT_TIMEOUT_MS, Timeout());
}

TEST(ConnCfgSetTimeout, NullCfgIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_timeout(nullptr, 100));
}

TEST(ConnCfgSetTimeout, NullCfgAndNegativeIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_timeout(nullptr, -1));
}

TEST_F(ConnCfgTest, SetTimeoutMinusOneIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_timeout(cfg_, -1));
}

TEST_F(ConnCfgTest, SetTimeoutIntMinIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_timeout(cfg_, INT_MIN));
}

TEST_F(ConnCfgTest, RejectedTimeoutLeavesValueUnchanged) {
  ASSERT_EQ(0, rpma_conn_cfg_set_timeout(cfg_, 1234));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_timeout(cfg_, -5));
  EXPECT_EQ(1234, Timeout());
}

TEST_F(ConnCfgTest, TimeoutRoundTripZero) {
  EXPECT_EQ(0, rpma_conn_cfg_set_timeout(cfg_, 0));
  EXPECT_EQ(0, Timeout());
}

TEST_F(ConnCfgTest, TimeoutRoundTripOne) {
  EXPECT_EQ(0, rpma_conn_cfg_set_timeout(cfg_, 1));
  EXPECT_EQ(1, Timeout());
}

TEST_F(ConnCfgTest, TimeoutRoundTripIntMax) {
  EXPECT_EQ(0, rpma_conn_cfg_set_timeout(cfg_, INT_MAX));
  EXPECT_EQ(INT_MAX, Timeout());
}

TEST(ConnCfgGetTimeout, NullCfgIsInval) {
  int timeout_ms = 0;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_timeout(nullptr, &timeout_ms));
}

TEST_F(ConnCfgTest, GetTimeoutNullOutIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_timeout(cfg_, nullptr));
}

TEST(ConnCfgGetTimeout, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_timeout(nullptr, nullptr));
}

// ---------------------------------------------------------------------------------------------
// cq_size, rcq_size, sq_size, rq_size: the same tests for each uint32_t field
// ---------------------------------------------------------------------------------------------

struct U32Field {
  const char* name;
  int (*set)(struct rpma_conn_cfg*, uint32_t);
  int (*get)(const struct rpma_conn_cfg*, uint32_t*);
  uint32_t default_value;
};

const U32Field kU32Fields[] = {
    {"CqSize", rpma_conn_cfg_set_cq_size, rpma_conn_cfg_get_cq_size, 10},
    {"RcqSize", rpma_conn_cfg_set_rcq_size, rpma_conn_cfg_get_rcq_size, 0},
    {"SqSize", rpma_conn_cfg_set_sq_size, rpma_conn_cfg_get_sq_size, 10},
    {"RqSize", rpma_conn_cfg_set_rq_size, rpma_conn_cfg_get_rq_size, 10},
};

class ConnCfgU32Test : public ConnCfgTest, public ::testing::WithParamInterface<U32Field> {
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

TEST_P(ConnCfgU32Test, Default) { EXPECT_EQ(GetParam().default_value, Get()); }

TEST_P(ConnCfgU32Test, SetNullCfgIsInval) { EXPECT_EQ(RPMA_E_INVAL, GetParam().set(nullptr, 5)); }

TEST_P(ConnCfgU32Test, GetNullCfgIsInval) {
  uint32_t value = 0;
  EXPECT_EQ(RPMA_E_INVAL, GetParam().get(nullptr, &value));
}

TEST_P(ConnCfgU32Test, GetNullOutIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, GetParam().get(cfg_, nullptr));
}

TEST_P(ConnCfgU32Test, GetBothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, GetParam().get(nullptr, nullptr));
}

TEST_P(ConnCfgU32Test, RoundTripZero) { RoundTrip(0); }

TEST_P(ConnCfgU32Test, RoundTripOne) { RoundTrip(1); }

TEST_P(ConnCfgU32Test, RoundTripTypical) { RoundTrip(256); }

TEST_P(ConnCfgU32Test, RoundTripIntMaxPlusOne) { RoundTrip(static_cast<uint32_t>(INT_MAX) + 1u); }

TEST_P(ConnCfgU32Test, RoundTripUint32Max) { RoundTrip(UINT32_MAX); }

TEST_P(ConnCfgU32Test, LastSetWins) {
  EXPECT_EQ(0, GetParam().set(cfg_, 7));
  EXPECT_EQ(0, GetParam().set(cfg_, 3));
  EXPECT_EQ(3u, Get());
}

// Setting this field leaves every other field at its default.
TEST_P(ConnCfgU32Test, SetLeavesOtherFieldsAlone) {
  ASSERT_EQ(0, GetParam().set(cfg_, 12345));
  for (const U32Field& other : kU32Fields) {
    if (other.get == GetParam().get) continue;
    uint32_t value = 0xDEADBEEF;
    EXPECT_EQ(0, other.get(cfg_, &value));
    EXPECT_EQ(other.default_value, value) << other.name;
  }
  EXPECT_EQ(RPMA_DEFAULT_TIMEOUT_MS, Timeout());
  bool shared = true;
  EXPECT_EQ(0, rpma_conn_cfg_get_compl_channel(cfg_, &shared));
  EXPECT_FALSE(shared);
}

INSTANTIATE_TEST_SUITE_P(Fields, ConnCfgU32Test, ::testing::ValuesIn(kU32Fields),
                         [](const ::testing::TestParamInfo<U32Field>& info) {
                           return std::string(info.param.name);
                         });

// ---------------------------------------------------------------------------------------------
// compl_channel
// ---------------------------------------------------------------------------------------------

TEST_F(ConnCfgTest, DefaultComplChannelIsNotShared) {
  bool shared = true;
  EXPECT_EQ(0, rpma_conn_cfg_get_compl_channel(cfg_, &shared));
  EXPECT_FALSE(shared);
}

TEST(ConnCfgSetComplChannel, NullCfgIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_compl_channel(nullptr, true));
}

TEST(ConnCfgGetComplChannel, NullCfgIsInval) {
  bool shared = false;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_compl_channel(nullptr, &shared));
}

TEST_F(ConnCfgTest, GetComplChannelNullOutIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_compl_channel(cfg_, nullptr));
}

TEST(ConnCfgGetComplChannel, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_compl_channel(nullptr, nullptr));
}

TEST_F(ConnCfgTest, ComplChannelRoundTripTrue) {
  EXPECT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg_, true));
  bool shared = false;
  EXPECT_EQ(0, rpma_conn_cfg_get_compl_channel(cfg_, &shared));
  EXPECT_TRUE(shared);
}

TEST_F(ConnCfgTest, ComplChannelRoundTripTrueThenFalse) {
  EXPECT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg_, true));
  EXPECT_EQ(0, rpma_conn_cfg_set_compl_channel(cfg_, false));
  bool shared = true;
  EXPECT_EQ(0, rpma_conn_cfg_get_compl_channel(cfg_, &shared));
  EXPECT_FALSE(shared);
}

// ---------------------------------------------------------------------------------------------
// srq
// ---------------------------------------------------------------------------------------------

TEST_F(ConnCfgTest, DefaultSrqIsNull) {
  struct rpma_srq* srq = reinterpret_cast<struct rpma_srq*>(0x1);
  EXPECT_EQ(0, rpma_conn_cfg_get_srq(cfg_, &srq));
  EXPECT_EQ(nullptr, srq);
}

TEST(ConnCfgGetSrq, NullCfgIsInval) {
  struct rpma_srq* srq = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_srq(nullptr, &srq));
}

TEST_F(ConnCfgTest, GetSrqNullOutIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_srq(cfg_, nullptr));
}

TEST(ConnCfgGetSrq, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_get_srq(nullptr, nullptr));
}

// The man page mentions only a NULL cfg; the code also rejects a NULL srq.
TEST_F(ConnCfgTest, SetSrqNullSrqIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_srq(cfg_, nullptr));
}

TEST(ConnCfgSetSrq, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_srq(nullptr, nullptr));
}

// Tests that need a real SRQ (and so a peer).
class ConnCfgSrqTest : public ConnCfgTest {
 protected:
  void SetUp() override {
    ConnCfgTest::SetUp();
    struct ibv_context* ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
    ASSERT_EQ(0, rpma_peer_new(ctx, &peer_));
    ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq_));
    ASSERT_NE(nullptr, srq_);
  }
  void TearDown() override {
    EXPECT_EQ(0, rpma_srq_delete(&srq_));
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
    ConnCfgTest::TearDown();
  }

  struct rpma_srq* Srq() {
    struct rpma_srq* srq = nullptr;
    EXPECT_EQ(0, rpma_conn_cfg_get_srq(cfg_, &srq));
    return srq;
  }

  struct rpma_peer* peer_ = nullptr;
  struct rpma_srq* srq_ = nullptr;
};

TEST_F(ConnCfgSrqTest, SetSrqNullCfgIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_srq(nullptr, srq_));
}

TEST_F(ConnCfgSrqTest, SetSrqRoundTrip) {
  EXPECT_EQ(0, rpma_conn_cfg_set_srq(cfg_, srq_));
  EXPECT_EQ(srq_, Srq());
}

TEST_F(ConnCfgSrqTest, SetNullSrqAfterRealOneIsInvalAndKeepsIt) {
  ASSERT_EQ(0, rpma_conn_cfg_set_srq(cfg_, srq_));
  EXPECT_EQ(RPMA_E_INVAL, rpma_conn_cfg_set_srq(cfg_, nullptr));
  EXPECT_EQ(srq_, Srq());
}

TEST_F(ConnCfgSrqTest, SetSecondSrqReplacesFirst) {
  struct rpma_srq* srq2 = nullptr;
  ASSERT_EQ(0, rpma_srq_new(peer_, nullptr, &srq2));
  EXPECT_EQ(0, rpma_conn_cfg_set_srq(cfg_, srq_));
  EXPECT_EQ(0, rpma_conn_cfg_set_srq(cfg_, srq2));
  EXPECT_EQ(srq2, Srq());
  EXPECT_EQ(0, rpma_srq_delete(&srq2));
}

TEST_F(ConnCfgSrqTest, SetSrqLeavesSizesAlone) {
  ASSERT_EQ(0, rpma_conn_cfg_set_srq(cfg_, srq_));
  for (const U32Field& field : kU32Fields) {
    uint32_t value = 0xDEADBEEF;
    EXPECT_EQ(0, field.get(cfg_, &value));
    EXPECT_EQ(field.default_value, value) << field.name;
  }
}

// Deleting the cfg does not delete the SRQ it refers to (TearDown deletes the SRQ afterwards).
TEST_F(ConnCfgSrqTest, DeleteCfgKeepsSrq) {
  struct rpma_conn_cfg* cfg = nullptr;
  ASSERT_EQ(0, rpma_conn_cfg_new(&cfg));
  ASSERT_EQ(0, rpma_conn_cfg_set_srq(cfg, srq_));
  EXPECT_EQ(0, rpma_conn_cfg_delete(&cfg));
  struct rpma_cq* rcq = nullptr;
  EXPECT_EQ(0, rpma_srq_get_rcq(srq_, &rcq));
}

}  // namespace
