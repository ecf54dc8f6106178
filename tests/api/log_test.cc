// Tests of rpma_log_set_threshold, rpma_log_get_threshold and rpma_log_set_function (a user
// function receives library messages at or below the threshold).
#include <librpma.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace {

// Out-of-range enum values, as a C caller could pass them.
rpma_log_threshold Threshold(int value) { return static_cast<rpma_log_threshold>(value); }
rpma_log_level Level(int value) { return static_cast<rpma_log_level>(value); }

rpma_log_level GetLevel(rpma_log_threshold threshold) {
  rpma_log_level level = Level(-100);
  EXPECT_EQ(0, rpma_log_get_threshold(threshold, &level));
  return level;
}

// Every test starts and ends with the library's defaults.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { Restore(); }
  void TearDown() override { Restore(); }
  static void Restore() {
    EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
    EXPECT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING));
    EXPECT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED));
  }
};

// ---------------------------------------------------------------------------------------------
// rpma_log_set_threshold: argument checks
// ---------------------------------------------------------------------------------------------

TEST_F(LogTest, SetThresholdMaxIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_WARNING));
}

TEST_F(LogTest, SetThresholdMinusOneIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(Threshold(-1), RPMA_LOG_LEVEL_WARNING));
}

TEST_F(LogTest, SetThresholdThreeIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(Threshold(3), RPMA_LOG_LEVEL_WARNING));
}

TEST_F(LogTest, SetThresholdLevelMinusTwoIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, Level(-2)));
}

TEST_F(LogTest, SetThresholdLevelAboveDebugIsInval) {
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_log_set_threshold(RPMA_LOG_THRESHOLD, Level(RPMA_LOG_LEVEL_DEBUG + 1)));
}

TEST_F(LogTest, SetAuxLevelMinusTwoIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, Level(-2)));
}

TEST_F(LogTest, SetAuxLevelAboveDebugIsInval) {
  EXPECT_EQ(RPMA_E_INVAL,
            rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, Level(RPMA_LOG_LEVEL_DEBUG + 1)));
}

TEST_F(LogTest, SetThresholdLevelMinusEightIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, Level(-8)));
}

TEST_F(LogTest, SetThresholdLevelSevenIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, Level(7)));
}

TEST_F(LogTest, SetMaxWithBadLevelIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_MAX, Level(-2)));
}

TEST_F(LogTest, RejectedLevelLeavesThresholdUnchanged) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO));
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, Level(6)));
  EXPECT_EQ(RPMA_LOG_LEVEL_INFO, GetLevel(RPMA_LOG_THRESHOLD));
}

TEST_F(LogTest, RejectedThresholdChangesNeitherThreshold) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_ERROR));
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_FATAL));
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_MAX, RPMA_LOG_LEVEL_DEBUG));
  EXPECT_EQ(RPMA_LOG_LEVEL_ERROR, GetLevel(RPMA_LOG_THRESHOLD));
  EXPECT_EQ(RPMA_LOG_LEVEL_FATAL, GetLevel(RPMA_LOG_THRESHOLD_AUX));
}

// ---------------------------------------------------------------------------------------------
// rpma_log_get_threshold: argument checks
// ---------------------------------------------------------------------------------------------

TEST_F(LogTest, GetThresholdMaxIsInval) {
  rpma_log_level level;
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_get_threshold(RPMA_LOG_THRESHOLD_MAX, &level));
}

TEST_F(LogTest, GetThresholdMinusOneIsInval) {
  rpma_log_level level;
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_get_threshold(Threshold(-1), &level));
}

TEST_F(LogTest, GetThresholdNullLevelIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_get_threshold(RPMA_LOG_THRESHOLD, nullptr));
}

TEST_F(LogTest, GetAuxNullLevelIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_get_threshold(RPMA_LOG_THRESHOLD_AUX, nullptr));
}

TEST_F(LogTest, GetMaxNullLevelIsInval) {
  EXPECT_EQ(RPMA_E_INVAL, rpma_log_get_threshold(RPMA_LOG_THRESHOLD_MAX, nullptr));
}

// ---------------------------------------------------------------------------------------------
// set/get round trips: every level on both thresholds
// ---------------------------------------------------------------------------------------------

class LogRoundTripTest
    : public LogTest,
      public ::testing::WithParamInterface<std::tuple<rpma_log_threshold, rpma_log_level>> {};

TEST_P(LogRoundTripTest, SetThenGet) {
  rpma_log_threshold threshold = std::get<0>(GetParam());
  rpma_log_level level = std::get<1>(GetParam());
  EXPECT_EQ(0, rpma_log_set_threshold(threshold, level));
  EXPECT_EQ(level, GetLevel(threshold));
}

// Setting one threshold leaves the other one alone.
TEST_P(LogRoundTripTest, OtherThresholdUnchanged) {
  rpma_log_threshold threshold = std::get<0>(GetParam());
  rpma_log_level level = std::get<1>(GetParam());
  rpma_log_threshold other =
      threshold == RPMA_LOG_THRESHOLD ? RPMA_LOG_THRESHOLD_AUX : RPMA_LOG_THRESHOLD;
  rpma_log_level before = GetLevel(other);
  EXPECT_EQ(0, rpma_log_set_threshold(threshold, level));
  EXPECT_EQ(before, GetLevel(other));
}

std::string RoundTripName(
    const ::testing::TestParamInfo<std::tuple<rpma_log_threshold, rpma_log_level>>& info) {
  static const char* const kLevels[] = {"Disabled", "Fatal", "Error", "Warning",
                                        "Notice",   "Info",  "Debug"};
  return std::string(std::get<0>(info.param) == RPMA_LOG_THRESHOLD ? "Threshold" : "Aux") +
         kLevels[std::get<1>(info.param) + 1];
}

INSTANTIATE_TEST_SUITE_P(
    AllLevels, LogRoundTripTest,
    ::testing::Combine(::testing::Values(RPMA_LOG_THRESHOLD, RPMA_LOG_THRESHOLD_AUX),
                       ::testing::Values(RPMA_LOG_DISABLED, RPMA_LOG_LEVEL_FATAL,
                                         RPMA_LOG_LEVEL_ERROR, RPMA_LOG_LEVEL_WARNING,
                                         RPMA_LOG_LEVEL_NOTICE, RPMA_LOG_LEVEL_INFO,
                                         RPMA_LOG_LEVEL_DEBUG)),
    RoundTripName);

// ---------------------------------------------------------------------------------------------
// rpma_log_set_function
// ---------------------------------------------------------------------------------------------

struct Message {
  rpma_log_level level;
  std::string file;
  bool file_null;
  int line;
  std::string function;
  std::string text;
};

std::mutex g_mutex;
std::vector<Message> g_messages;

void CaptureLog(enum rpma_log_level level, const char* file_name, const int line_no,
                const char* function_name, const char* message_format, ...) {
  char text[1024] = "";
  if (message_format != nullptr) {
    va_list args;
    va_start(args, message_format);
    vsnprintf(text, sizeof(text), message_format, args);
    va_end(args);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_messages.push_back(Message{level, file_name ? file_name : "", file_name == nullptr, line_no,
                               function_name ? function_name : "", text});
}

std::vector<Message> TakeMessages() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<Message> out;
  out.swap(g_messages);
  return out;
}

// A TCP port on 127.0.0.1 that was free a moment ago.
std::string FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(0, bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)));
  socklen_t len = sizeof(addr);
  EXPECT_EQ(0, getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len));
  close(fd);
  return std::to_string(ntohs(addr.sin_port));
}

// rpma_ep_listen logs "Waiting for incoming connection on %s:%s" at NOTICE.
class LogFunctionTest : public LogTest {
 protected:
  void SetUp() override {
    LogTest::SetUp();
    TakeMessages();
    struct ibv_context* ctx = nullptr;
    ASSERT_EQ(0, rpma_utils_get_ibv_context("127.0.0.1", RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
    ASSERT_EQ(0, rpma_peer_new(ctx, &peer_));
  }
  void TearDown() override {
    EXPECT_EQ(0, rpma_peer_delete(&peer_));
    LogTest::TearDown();
    TakeMessages();
  }

  // Listens on a free port and shuts the endpoint down again; returns the port.
  std::string ListenOnce() {
    std::string port = FreePort();
    struct rpma_ep* ep = nullptr;
    EXPECT_EQ(0, rpma_ep_listen(peer_, "127.0.0.1", port.c_str(), &ep));
    EXPECT_EQ(0, rpma_ep_shutdown(&ep));
    return port;
  }

  static const Message* FindWaiting(const std::vector<Message>& messages) {
    for (const Message& m : messages)
      if (m.text.find("Waiting for incoming connection") != std::string::npos) return &m;
    return nullptr;
  }

  struct rpma_peer* peer_ = nullptr;
};

TEST_F(LogTest, SetFunctionNullReturnsZero) {
  EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
}

TEST_F(LogTest, SetFunctionCustomReturnsZero) { EXPECT_EQ(0, rpma_log_set_function(CaptureLog)); }

TEST_F(LogTest, SetFunctionCustomTwiceReturnsZero) {
  EXPECT_EQ(0, rpma_log_set_function(CaptureLog));
  EXPECT_EQ(0, rpma_log_set_function(CaptureLog));
}

TEST_F(LogTest, SetFunctionDoesNotChangeThresholds) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_INFO));
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_ERROR));
  EXPECT_EQ(0, rpma_log_set_function(CaptureLog));
  EXPECT_EQ(RPMA_LOG_LEVEL_INFO, GetLevel(RPMA_LOG_THRESHOLD));
  EXPECT_EQ(RPMA_LOG_LEVEL_ERROR, GetLevel(RPMA_LOG_THRESHOLD_AUX));
  EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
  EXPECT_EQ(RPMA_LOG_LEVEL_INFO, GetLevel(RPMA_LOG_THRESHOLD));
  EXPECT_EQ(RPMA_LOG_LEVEL_ERROR, GetLevel(RPMA_LOG_THRESHOLD_AUX));
}

TEST_F(LogFunctionTest, NoticeReachesCustomFunction) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  std::string port = ListenOnce();
  std::vector<Message> messages = TakeMessages();
  const Message* m = FindWaiting(messages);
  ASSERT_NE(nullptr, m) << messages.size() << " messages, none from rpma_ep_listen";
  EXPECT_EQ(RPMA_LOG_LEVEL_NOTICE, m->level);
  // librpma's RPMA_LOG_* macros append "\n" to the format (RPMA_LOG(level, format "\n", ...)):
  // a function written for librpma gets one line per message.
  EXPECT_EQ("Waiting for incoming connection on 127.0.0.1:" + port + "\n", m->text);
  EXPECT_FALSE(m->file_null);
  EXPECT_FALSE(m->file.empty());
  EXPECT_GT(m->line, 0);
  EXPECT_EQ("rpma_ep_listen", m->function);
}

// Every message that reaches the function is at or below the threshold.
TEST_F(LogFunctionTest, NothingAboveThresholdReachesFunction) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  ListenOnce();
  for (const Message& m : TakeMessages()) EXPECT_LE(m.level, RPMA_LOG_LEVEL_NOTICE) << m.text;
}

TEST_F(LogFunctionTest, HigherThresholdAlsoPassesNotice) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_DEBUG));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  ListenOnce();
  const std::vector<Message> messages = TakeMessages();
  const Message* m = FindWaiting(messages);
  ASSERT_NE(nullptr, m);
  EXPECT_EQ(RPMA_LOG_LEVEL_NOTICE, m->level);
}

TEST_F(LogFunctionTest, NoticeAboveWarningThresholdDoesNotReachFunction) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_WARNING));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  ListenOnce();
  const std::vector<Message> messages = TakeMessages();
  EXPECT_EQ(nullptr, FindWaiting(messages));
  for (const Message& m : messages) EXPECT_LE(m.level, RPMA_LOG_LEVEL_WARNING) << m.text;
}

TEST_F(LogFunctionTest, DisabledThresholdPassesNothing) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_DISABLED));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  ListenOnce();
  EXPECT_TRUE(TakeMessages().empty());
}

// The AUX threshold is for the default function only; a user function sees what THRESHOLD lets
// through, whatever AUX says.
TEST_F(LogFunctionTest, AuxThresholdDoesNotFilterCustomFunction) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE));
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_DISABLED));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  ListenOnce();
  const std::vector<Message> messages = TakeMessages();
  EXPECT_NE(nullptr, FindWaiting(messages));
}

TEST_F(LogFunctionTest, NullRestoresDefaultFunction) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  EXPECT_EQ(0, rpma_log_set_function(RPMA_LOG_USE_DEFAULT_FUNCTION));
  ListenOnce();
  EXPECT_TRUE(TakeMessages().empty());
}

TEST_F(LogFunctionTest, EachListenLogsOnce) {
  ASSERT_EQ(0, rpma_log_set_threshold(RPMA_LOG_THRESHOLD, RPMA_LOG_LEVEL_NOTICE));
  ASSERT_EQ(0, rpma_log_set_function(CaptureLog));
  ListenOnce();
  ListenOnce();
  int waiting = 0;
  for (const Message& m : TakeMessages())
    if (m.text.find("Waiting for incoming connection") != std::string::npos) ++waiting;
  EXPECT_EQ(2, waiting);
}

}  // namespace
