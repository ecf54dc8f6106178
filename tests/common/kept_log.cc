// kept_log.cc -- the lines KeepLogLine keeps, under a lock.
#include "tests/common/kept_log.h"

#include <stdarg.h>
#include <stdio.h>

#include <mutex>

namespace {

std::mutex g_log_mutex;
std::string g_log;

}  // namespace

void KeepLogLine(rpma_log_level level, const char* file, const int line, const char* function,
                 const char* format, ...) {
  if (level > RPMA_LOG_LEVEL_WARNING) return;
  char text[512];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log += text;
  g_log += "\n";
}

std::string LoggedLines() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return g_log;
}

void ForgetLoggedLines() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.clear();
}
