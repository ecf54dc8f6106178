// Tests of rpma_utils_get_ibv_context, rpma_utils_ibv_context_is_odp_capable,
// rpma_utils_conn_event_2str and rpma_err_2str.
#include <librpma.h>

#include <climits>
#include <cstring>

#include <gtest/gtest.h>

namespace {

constexpr const char* kLoopback = "127.0.0.1";
// TEST-NET-1 (RFC 5737): documentation-only, never assigned to a host.
constexpr const char* kNotOwned = "192.0.2.1";
// ".invalid" (RFC 6761) never resolves.
constexpr const char* kUnresolvable = "no-such-host.invalid";

// Out-of-range enum values, as a C caller could pass them.
rpma_util_ibv_context_type BadType(int value) {
  return static_cast<rpma_util_ibv_context_type>(value);
}

rpma_conn_event Event(int value) { return static_cast<rpma_conn_event>(value); }

struct ibv_context* LocalContext() {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  EXPECT_NE(nullptr, ctx);
  return ctx;
}

// ---------------------------------------------------------------------------------------------
// rpma_utils_get_ibv_context: argument checks
// ---------------------------------------------------------------------------------------------

TEST(UtilsGetIbvContext, NullAddrLocalIsInval) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_get_ibv_context(nullptr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
}

TEST(UtilsGetIbvContext, NullAddrRemoteIsInval) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_get_ibv_context(nullptr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
}

TEST(UtilsGetIbvContext, NullCtxPtrLocalIsInval) {
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, nullptr));
}

TEST(UtilsGetIbvContext, NullCtxPtrRemoteIsInval) {
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_REMOTE, nullptr));
}

TEST(UtilsGetIbvContext, NullAddrAndNullCtxPtrIsInval) {
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_utils_get_ibv_context(nullptr, RPMA_UTIL_IBV_CONTEXT_LOCAL, nullptr));
}

TEST(UtilsGetIbvContext, BadTypeTwoIsInval) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_get_ibv_context(kLoopback, BadType(2), &ctx));
}

TEST(UtilsGetIbvContext, BadTypeMinusOneIsInval) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_get_ibv_context(kLoopback, BadType(-1), &ctx));
}

TEST(UtilsGetIbvContext, BadTypeWithNullAddrIsInval) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_get_ibv_context(nullptr, BadType(2), &ctx));
}

// A bad type is rejected before any address lookup: an unresolvable name still gives INVAL.
TEST(UtilsGetIbvContext, BadTypeWithUnresolvableAddrIsInval) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_get_ibv_context(kUnresolvable, BadType(2), &ctx));
}

// ---------------------------------------------------------------------------------------------
// rpma_utils_get_ibv_context: lookups
// ---------------------------------------------------------------------------------------------

TEST(UtilsGetIbvContext, LocalLoopbackSucceeds) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
  EXPECT_NE(nullptr, ctx);
}

TEST(UtilsGetIbvContext, LocalLoopbackTwiceSucceeds) {
  struct ibv_context* ctx1 = nullptr;
  struct ibv_context* ctx2 = nullptr;
  EXPECT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx1));
  EXPECT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx2));
  EXPECT_NE(nullptr, ctx1);
  EXPECT_NE(nullptr, ctx2);
}

TEST(UtilsGetIbvContext, LocalAddressNotOwnedIsProvider) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_utils_get_ibv_context(kNotOwned, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
}

TEST(UtilsGetIbvContext, RemoteLoopbackSucceeds) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
  EXPECT_NE(nullptr, ctx);
}

TEST(UtilsGetIbvContext, LocalUnresolvableNameIsProvider) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_utils_get_ibv_context(kUnresolvable, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
}

TEST(UtilsGetIbvContext, RemoteUnresolvableNameIsProvider) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER,
            rpma_utils_get_ibv_context(kUnresolvable, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
}

// getaddrinfo("") fails (EAI_NONAME), so rdma_getaddrinfo fails: PROVIDER.
TEST(UtilsGetIbvContext, LocalEmptyAddrIsProvider) {
  struct ibv_context* ctx = nullptr;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_utils_get_ibv_context("", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
}

// ---------------------------------------------------------------------------------------------
// rpma_utils_ibv_context_is_odp_capable
// ---------------------------------------------------------------------------------------------

TEST(UtilsIsOdpCapable, NullCtxIsInval) {
  int is_odp_capable = -1;
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_ibv_context_is_odp_capable(nullptr, &is_odp_capable));
}

TEST(UtilsIsOdpCapable, NullOutIsInval) {
  struct ibv_context* ctx = LocalContext();
  ASSERT_NE(nullptr, ctx);
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_ibv_context_is_odp_capable(ctx, nullptr));
}

TEST(UtilsIsOdpCapable, BothNullIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_utils_ibv_context_is_odp_capable(nullptr, nullptr));
}

TEST(UtilsIsOdpCapable, ValidCtxGivesZeroOrOne) {
  struct ibv_context* ctx = LocalContext();
  ASSERT_NE(nullptr, ctx);
  int is_odp_capable = -1;
  EXPECT_EQ(0, rpma_utils_ibv_context_is_odp_capable(ctx, &is_odp_capable));
  EXPECT_TRUE(is_odp_capable == 0 || is_odp_capable == 1) << is_odp_capable;
}

TEST(UtilsIsOdpCapable, RemoteCtxGivesZeroOrOne) {
  struct ibv_context* ctx = nullptr;
  ASSERT_EQ(0, rpma_utils_get_ibv_context(kLoopback, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
  int is_odp_capable = -1;
  EXPECT_EQ(0, rpma_utils_ibv_context_is_odp_capable(ctx, &is_odp_capable));
  EXPECT_TRUE(is_odp_capable == 0 || is_odp_capable == 1) << is_odp_capable;
}

// librpma sets *is_odp_capable = 0 before it queries the device, so a failed query
// (PROVIDER) leaves 0 there.
TEST(UtilsIsOdpCapable, FailedQueryLeavesZero) {
  struct ibv_context not_a_device;
  memset(&not_a_device, 0, sizeof(not_a_device));
  int is_odp_capable = -1;
  EXPECT_EQ(RPMA_E_PROVIDER, rpma_utils_ibv_context_is_odp_capable(&not_a_device, &is_odp_capable));
  EXPECT_EQ(0, is_odp_capable);
}

TEST(UtilsIsOdpCapable, AnswerIsStable) {
  struct ibv_context* ctx = LocalContext();
  ASSERT_NE(nullptr, ctx);
  int first = -1;
  int second = -1;
  EXPECT_EQ(0, rpma_utils_ibv_context_is_odp_capable(ctx, &first));
  EXPECT_EQ(0, rpma_utils_ibv_context_is_odp_capable(ctx, &second));
  EXPECT_EQ(first, second);
}

// ---------------------------------------------------------------------------------------------
// rpma_utils_conn_event_2str
// ---------------------------------------------------------------------------------------------

TEST(UtilsConnEvent2Str, Undefined) {
  EXPECT_STREQ("Undefined connection event", rpma_utils_conn_event_2str(RPMA_CONN_UNDEFINED));
}

TEST(UtilsConnEvent2Str, Established) {
  EXPECT_STREQ("Connection established", rpma_utils_conn_event_2str(RPMA_CONN_ESTABLISHED));
}

TEST(UtilsConnEvent2Str, Closed) {
  EXPECT_STREQ("Connection closed", rpma_utils_conn_event_2str(RPMA_CONN_CLOSED));
}

TEST(UtilsConnEvent2Str, Lost) {
  EXPECT_STREQ("Connection lost", rpma_utils_conn_event_2str(RPMA_CONN_LOST));
}

TEST(UtilsConnEvent2Str, Rejected) {
  EXPECT_STREQ("Connection rejected", rpma_utils_conn_event_2str(RPMA_CONN_REJECTED));
}

TEST(UtilsConnEvent2Str, Unreachable) {
  EXPECT_STREQ("Connection unreachable", rpma_utils_conn_event_2str(RPMA_CONN_UNREACHABLE));
}

TEST(UtilsConnEvent2Str, FiveIsUnsupported) {
  EXPECT_STREQ("Unsupported connection event", rpma_utils_conn_event_2str(Event(5)));
}

TEST(UtilsConnEvent2Str, HundredIsUnsupported) {
  EXPECT_STREQ("Unsupported connection event", rpma_utils_conn_event_2str(Event(100)));
}

TEST(UtilsConnEvent2Str, MinusTwoIsUnsupported) {
  EXPECT_STREQ("Unsupported connection event", rpma_utils_conn_event_2str(Event(-2)));
}

// ---------------------------------------------------------------------------------------------
// rpma_err_2str
// ---------------------------------------------------------------------------------------------

TEST(Err2Str, Success) { EXPECT_STREQ("Success", rpma_err_2str(0)); }

TEST(Err2Str, Unknown) { EXPECT_STREQ("Unknown error", rpma_err_2str(RPMA_E_UNKNOWN)); }

TEST(Err2Str, Nosupp) { EXPECT_STREQ("Not supported", rpma_err_2str(RPMA_E_NOSUPP)); }

TEST(Err2Str, Provider) { EXPECT_STREQ("Provider error occurred", rpma_err_2str(RPMA_E_PROVIDER)); }

TEST(Err2Str, Nomem) { EXPECT_STREQ("Out of memory", rpma_err_2str(RPMA_E_NOMEM)); }

TEST(Err2Str, Inval) { EXPECT_STREQ("Invalid argument", rpma_err_2str(RPMA_E_INVAL)); }

TEST(Err2Str, NoCompletion) {
  EXPECT_STREQ("No next completion available", rpma_err_2str(RPMA_E_NO_COMPLETION));
}

TEST(Err2Str, NoEvent) { EXPECT_STREQ("No next event available", rpma_err_2str(RPMA_E_NO_EVENT)); }

TEST(Err2Str, Again) { EXPECT_STREQ("Temporary error, try again", rpma_err_2str(RPMA_E_AGAIN)); }

TEST(Err2Str, SharedChannel) {
  EXPECT_STREQ("Completion channel is shared", rpma_err_2str(RPMA_E_SHARED_CHANNEL));
}

TEST(Err2Str, NotSharedChannel) {
  EXPECT_STREQ("Completion channel is not shared", rpma_err_2str(RPMA_E_NOT_SHARED_CHNL));
}

TEST(Err2Str, OneBelowLastCodeIsUnknown) {
  EXPECT_STREQ("Unknown error", rpma_err_2str(RPMA_E_NOT_SHARED_CHNL - 1));
}

TEST(Err2Str, OneAboveFirstCodeIsUnknown) {
  EXPECT_STREQ("Unknown error", rpma_err_2str(RPMA_E_UNKNOWN + 1));
}

TEST(Err2Str, MinusOneIsUnknown) { EXPECT_STREQ("Unknown error", rpma_err_2str(-1)); }

TEST(Err2Str, PositiveIsUnknown) { EXPECT_STREQ("Unknown error", rpma_err_2str(1)); }

TEST(Err2Str, IntMinIsUnknown) { EXPECT_STREQ("Unknown error", rpma_err_2str(INT_MIN)); }

TEST(Err2Str, IntMaxIsUnknown) { EXPECT_STREQ("Unknown error", rpma_err_2str(INT_MAX)); }

}  // namespace
