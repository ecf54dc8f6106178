// log.cc -- thresholds, the replaceable log function and librpma's default output format.
#include "sim/common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

namespace rpma_sim {
namespace {

std::atomic<int> g_thresholds[2] = {{static_cast<int>(LogLevel::kWarning)},
                                    {static_cast<int>(LogLevel::kDisabled)}};
std::atomic<LogFunction> g_function{&DefaultLogFunction};

// librpma's level tags, padded to the same width.
const char* LevelTag(LogLevel level) {
  switch (level) {
    case LogLevel::kFatal:
      return "*FATAL* ";
    case LogLevel::kError:
      return "*ERROR* ";
    case LogLevel::kWarning:
      return "*WARN*  ";
    case LogLevel::kNotice:
      return "*NOTE*  ";
    case LogLevel::kInfo:
      return "*INFO*  ";
    case LogLevel::kDebug:
      return "*DEBUG* ";
    case LogLevel::kDisabled:
      break;
  }
  return "";
}

int SyslogSeverity(LogLevel level) {
  switch (level) {
    case LogLevel::kFatal:
      return LOG_CRIT;
    case LogLevel::kError:
      return LOG_ERR;
    case LogLevel::kWarning:
      return LOG_WARNING;
    case LogLevel::kNotice:
      return LOG_NOTICE;
    case LogLevel::kInfo:
      return LOG_INFO;
    default:
      return LOG_DEBUG;
  }
}

// "%b %d %H:%M:%S.uuuuuu [tid] " like librpma's stderr prefix.
void TimestampPrefix(char* buf, size_t size) {
  struct timeval tv;
  gettimeofday(&tv, nullptr);
  struct tm tm_local;
  localtime_r(&tv.tv_sec, &tm_local);
  char date[32];
  if (strftime(date, sizeof(date), "%b %d %H:%M:%S", &tm_local) == 0) date[0] = '\0';
  snprintf(buf, size, "%s.%06ld [%ld] ", date, static_cast<long>(tv.tv_usec),
           static_cast<long>(syscall(SYS_gettid)));
}

}  // namespace

void LogSetThreshold(LogThreshold which, LogLevel level) {
  g_thresholds[static_cast<int>(which)].store(static_cast<int>(level));
}

LogLevel LogGetThreshold(LogThreshold which) {
  return static_cast<LogLevel>(g_thresholds[static_cast<int>(which)].load());
}

void LogSetFunction(LogFunction function) {
  g_function.store(function != nullptr ? function : &DefaultLogFunction);
}

LogFunction LogFunctionFor(LogLevel level) {
  if (level == LogLevel::kDisabled || static_cast<int>(level) > g_thresholds[0].load())
    return nullptr;
  return g_function.load();
}

namespace {

// A message and its "file: line: function: " part, formatted as the default function does.
struct LogLine {
  char message[1024];
  char file_info[256];

  LogLine(const char* file, int line, const char* function, const char* format, va_list args) {
    vsnprintf(message, sizeof(message), format, args);
    file_info[0] = '\0';
    if (file == nullptr) return;
    const char* base = strrchr(file, '/');
    base = base != nullptr ? base + 1 : file;
    snprintf(file_info, sizeof(file_info), "%s: %3d: %s: ", base, line,
             function != nullptr ? function : "");
  }

  void WriteToStderr(LogLevel level) const {
    char prefix[64];
    TimestampPrefix(prefix, sizeof(prefix));
    // The message ends with the "\n" its format has (RPMA_SIM_LOG's), as librpma's do.
    fprintf(stderr, "%s%s%s%s", prefix, LevelTag(level), file_info, message);
  }
};

}  // namespace

void DefaultLogFunction(LogLevel level, const char* file, int line, const char* function,
                        const char* format, ...) {
  if (level < LogLevel::kFatal || level > LogLevel::kDebug) return;
  va_list args;
  va_start(args, format);
  LogLine text(file, line, function, format, args);
  va_end(args);
  if (static_cast<int>(level) <= g_thresholds[0].load()) {
    syslog(SyslogSeverity(level), "%s%s%s", LevelTag(level), text.file_info, text.message);
  }
  if (static_cast<int>(level) <= g_thresholds[1].load()) text.WriteToStderr(level);
}

void LogAlways(const char* file, int line, const char* function, const char* format, ...) {
  va_list args;
  va_start(args, format);
  LogLine text(file, line, function, format, args);
  va_end(args);
  text.WriteToStderr(LogLevel::kDebug);
}

}  // namespace rpma_sim
