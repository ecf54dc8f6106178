// Tests of the logging core (sim/common/log): thresholds, LogFunctionFor, custom and default
// functions.
#include "sim/common/log.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

namespace rpma_sim {
namespace {

// Read during static initialisation, before any test changes them.
const LogLevel kInitialMain = LogGetThreshold(LogThreshold::kMain);
const LogLevel kInitialAux = LogGetThreshold(LogThreshold::kAux);
const LogFunction kInitialFunction = LogFunctionFor(LogLevel::kFatal);

// What the recording log function saw last.
struct Record {
  int calls = 0;
  LogLevel level = LogLevel::kDisabled;
  std::string file;
  int line = 0;
  std::string function;
  std::string format;
  std::string message;
};
Record g_record;

void RecordingLogFunction(LogLevel level, const char* file, int line, const char* function,
                          const char* format, ...) {
  ++g_record.calls;
  g_record.level = level;
  g_record.file = file != nullptr ? file : "(null)";
  g_record.line = line;
  g_record.function = function != nullptr ? function : "(null)";
  g_record.format = format;
  char buffer[512];
  va_list args;
  va_start(args, format);
  vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  g_record.message = buffer;
}

// Runs `body` with stderr redirected into a pipe; returns what it wrote.
template <typename Body>
std::string CaptureStderr(Body body) {
  fflush(stderr);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return "<pipe failed>";
  const int saved = dup(STDERR_FILENO);
  dup2(pipe_fds[1], STDERR_FILENO);
  body();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(pipe_fds[1]);
  std::string captured;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) captured.append(buffer, n);
  close(pipe_fds[0]);
  return captured;
}

// True if `line` starts with librpma's "%b %d %H:%M:%S.uuuuuu [tid] " prefix.
bool HasTimestampPrefix(const std::string& line) {
  // 'A' an upper-case letter, 'a' a lower-case one, '0' a digit, anything else itself.
  const std::string shape = "Aaa 00 00:00:00.000000 [";
  if (line.size() < shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const unsigned char c = line[i];
    const bool ok = shape[i] == 'A'   ? isupper(c) != 0
                    : shape[i] == 'a' ? islower(c) != 0
                    : shape[i] == '0' ? isdigit(c) != 0
                                      : c == static_cast<unsigned char>(shape[i]);
    if (!ok) return false;
  }
  size_t i = shape.size();
  const size_t digits = i;
  while (i < line.size() && isdigit(static_cast<unsigned char>(line[i]))) ++i;
  return i > digits && line.compare(i, 2, "] ") == 0;
}

// Every test starts and ends with the defaults and no recorded call.
class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { Restore(); }
  void TearDown() override { Restore(); }
  static void Restore() {
    LogSetFunction(nullptr);
    LogSetThreshold(LogThreshold::kMain, LogLevel::kWarning);
    LogSetThreshold(LogThreshold::kAux, LogLevel::kDisabled);
    g_record = Record();
  }
};

TEST_F(LogTest, DefaultsAreWarningAndDisabledWithTheDefaultFunction) {
  EXPECT_EQ(LogLevel::kWarning, kInitialMain);
  EXPECT_EQ(LogLevel::kDisabled, kInitialAux);
  EXPECT_EQ(&DefaultLogFunction, kInitialFunction);
}

TEST_F(LogTest, LevelsMatchLibrpmaValues) {
  EXPECT_EQ(-1, static_cast<int>(LogLevel::kDisabled));
  EXPECT_EQ(0, static_cast<int>(LogLevel::kFatal));
  EXPECT_EQ(5, static_cast<int>(LogLevel::kDebug));
  EXPECT_EQ(0, static_cast<int>(LogThreshold::kMain));
  EXPECT_EQ(1, static_cast<int>(LogThreshold::kAux));
}

TEST_F(LogTest, SetThresholdRoundTripsForBothThresholds) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDebug);
  LogSetThreshold(LogThreshold::kAux, LogLevel::kNotice);
  EXPECT_EQ(LogLevel::kDebug, LogGetThreshold(LogThreshold::kMain));
  EXPECT_EQ(LogLevel::kNotice, LogGetThreshold(LogThreshold::kAux));
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDisabled);
  EXPECT_EQ(LogLevel::kDisabled, LogGetThreshold(LogThreshold::kMain));
  EXPECT_EQ(LogLevel::kNotice, LogGetThreshold(LogThreshold::kAux));
}

TEST_F(LogTest, FunctionForIsNullAboveTheMainThreshold) {
  EXPECT_NE(nullptr, LogFunctionFor(LogLevel::kFatal));
  EXPECT_NE(nullptr, LogFunctionFor(LogLevel::kError));
  EXPECT_NE(nullptr, LogFunctionFor(LogLevel::kWarning));
  EXPECT_EQ(nullptr, LogFunctionFor(LogLevel::kNotice));
  EXPECT_EQ(nullptr, LogFunctionFor(LogLevel::kInfo));
  EXPECT_EQ(nullptr, LogFunctionFor(LogLevel::kDebug));
}

TEST_F(LogTest, FunctionForFollowsTheMainThresholdOnly) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDebug);
  EXPECT_NE(nullptr, LogFunctionFor(LogLevel::kDebug));
  LogSetThreshold(LogThreshold::kMain, LogLevel::kFatal);
  LogSetThreshold(LogThreshold::kAux, LogLevel::kDebug);
  EXPECT_NE(nullptr, LogFunctionFor(LogLevel::kFatal));
  EXPECT_EQ(nullptr, LogFunctionFor(LogLevel::kError));
}

TEST_F(LogTest, MainThresholdDisabledDropsEverything) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDisabled);
  EXPECT_EQ(nullptr, LogFunctionFor(LogLevel::kFatal));
  EXPECT_EQ(nullptr, LogFunctionFor(LogLevel::kDebug));
}

TEST_F(LogTest, DisabledLevelNeverHasAFunction) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDebug);
  EXPECT_EQ(nullptr, LogFunctionFor(LogLevel::kDisabled));
}

TEST_F(LogTest, SetFunctionInstallsAndNullRestoresTheDefault) {
  EXPECT_EQ(&DefaultLogFunction, LogFunctionFor(LogLevel::kError));
  LogSetFunction(&RecordingLogFunction);
  EXPECT_EQ(&RecordingLogFunction, LogFunctionFor(LogLevel::kError));
  LogSetFunction(nullptr);
  EXPECT_EQ(&DefaultLogFunction, LogFunctionFor(LogLevel::kError));
}

TEST_F(LogTest, CustomFunctionReceivesTheCallersFormatAndArguments) {
  LogSetFunction(&RecordingLogFunction);
  LogSetThreshold(LogThreshold::kMain, LogLevel::kNotice);
  const int line = __LINE__ + 1;
  RPMA_SIM_LOG(LogLevel::kNotice, "x=%d s=%s", 7, "abc");
  ASSERT_EQ(1, g_record.calls);
  EXPECT_EQ(LogLevel::kNotice, g_record.level);
  EXPECT_EQ(__FILE__, g_record.file);
  EXPECT_EQ(line, g_record.line);
  EXPECT_EQ("TestBody", g_record.function);
  EXPECT_EQ("x=%d s=%s\n", g_record.format);  // the "\n" librpma's macros add
  EXPECT_EQ("x=7 s=abc\n", g_record.message);
}

TEST_F(LogTest, LevelMacrosPassTheirLevel) {
  LogSetFunction(&RecordingLogFunction);
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDebug);
  SIM_LOG_ERROR("e");
  EXPECT_EQ(LogLevel::kError, g_record.level);
  SIM_LOG_WARNING("w");
  EXPECT_EQ(LogLevel::kWarning, g_record.level);
  SIM_LOG_NOTICE("n");
  EXPECT_EQ(LogLevel::kNotice, g_record.level);
  SIM_LOG_INFO("i");
  EXPECT_EQ(LogLevel::kInfo, g_record.level);
  SIM_LOG_DEBUG("d");
  EXPECT_EQ(LogLevel::kDebug, g_record.level);
  EXPECT_EQ(5, g_record.calls);
}

TEST_F(LogTest, MessageAboveTheThresholdIsDroppedWithoutEvaluatingArguments) {
  LogSetFunction(&RecordingLogFunction);
  int evaluated = 0;
  SIM_LOG_INFO("%d", ++evaluated);
  EXPECT_EQ(0, g_record.calls);
  EXPECT_EQ(0, evaluated);
  SIM_LOG_WARNING("%d", ++evaluated);
  EXPECT_EQ(1, g_record.calls);
  EXPECT_EQ(1, evaluated);
}

TEST_F(LogTest, DefaultFunctionWritesLibrpmaFormatToStderrWhenAuxAllows) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDisabled);  // keep syslog out of it
  LogSetThreshold(LogThreshold::kAux, LogLevel::kNotice);
  const std::string out = CaptureStderr([] {
    DefaultLogFunction(LogLevel::kNotice, "/some/dir/file.cc", 42, "func", "message %d\n", 5);
  });
  // librpma: "%b %d %H:%M:%S.uuuuuu [tid] " + level tag + "%s: %3d: %s: " + message (whose
  // format ends with the "\n" librpma's macros add; the function adds none).
  EXPECT_TRUE(HasTimestampPrefix(out)) << out;
  EXPECT_EQ(1, std::count(out.begin(), out.end(), '\n')) << out;
  EXPECT_NE(std::string::npos, out.find("] *NOTE*  file.cc:  42: func: message 5\n")) << out;
}

TEST_F(LogTest, DefaultFunctionPadsTheLineNumberToThreeColumns) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDisabled);
  LogSetThreshold(LogThreshold::kAux, LogLevel::kDebug);
  const std::string out = CaptureStderr([] {
    DefaultLogFunction(LogLevel::kError, "a.cc", 7, "f", "one\n");
    DefaultLogFunction(LogLevel::kWarning, "a.cc", 123, "f", "two\n");
    DefaultLogFunction(LogLevel::kDebug, "a.cc", 1234, "f", "three\n");
  });
  EXPECT_NE(std::string::npos, out.find("*ERROR* a.cc:   7: f: one\n")) << out;
  EXPECT_NE(std::string::npos, out.find("*WARN*  a.cc: 123: f: two\n")) << out;
  EXPECT_NE(std::string::npos, out.find("*DEBUG* a.cc: 1234: f: three\n")) << out;
}

TEST_F(LogTest, DefaultFunctionWithoutFileWritesOnlyTheMessage) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDisabled);
  LogSetThreshold(LogThreshold::kAux, LogLevel::kFatal);
  const std::string out =
      CaptureStderr([] { DefaultLogFunction(LogLevel::kFatal, nullptr, 0, nullptr, "bare\n"); });
  EXPECT_NE(std::string::npos, out.find("] *FATAL* bare\n")) << out;
}

TEST_F(LogTest, DefaultFunctionWritesNothingToStderrAboveAux) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDisabled);
  LogSetThreshold(LogThreshold::kAux, LogLevel::kWarning);
  const std::string out =
      CaptureStderr([] { DefaultLogFunction(LogLevel::kNotice, "file.cc", 42, "func", "quiet"); });
  EXPECT_EQ("", out);
}

TEST_F(LogTest, DefaultFunctionWritesNothingToStderrWhenAuxIsDisabled) {
  LogSetThreshold(LogThreshold::kMain, LogLevel::kDisabled);
  const std::string out =
      CaptureStderr([] { DefaultLogFunction(LogLevel::kFatal, "file.cc", 42, "func", "quiet"); });
  EXPECT_EQ("", out);
}

}  // namespace
}  // namespace rpma_sim
