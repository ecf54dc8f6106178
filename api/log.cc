// log.cc -- rpma_log_*: thresholds and the replaceable log function.
//
// The simulator formats each message once; a user's rpma_log_function receives it as
// ("%s", message), which prints the same text as librpma's (format, args...).
#include <librpma.h>

#include <atomic>

#include "sim/common/log.h"

namespace {

std::atomic<rpma_log_function*> g_user_function{nullptr};

void UserFunctionSink(rpma_sim::LogLevel level, const char* file, int line, const char* function,
                      const char* message) {
  rpma_log_function* user = g_user_function.load();
  if (user == nullptr) {
    rpma_sim::DefaultLogSink(level, file, line, function, message);
    return;
  }
  user(static_cast<enum rpma_log_level>(level), file, line, function, "%s", message);
}

bool ValidThreshold(enum rpma_log_threshold threshold) {
  return threshold == RPMA_LOG_THRESHOLD || threshold == RPMA_LOG_THRESHOLD_AUX;
}

}  // namespace

int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level) {
  if (!ValidThreshold(threshold)) return RPMA_E_INVAL;
  if (level < RPMA_LOG_DISABLED || level > RPMA_LOG_LEVEL_DEBUG) return RPMA_E_INVAL;
  rpma_sim::LogSetThreshold(static_cast<rpma_sim::LogThreshold>(threshold),
                            static_cast<rpma_sim::LogLevel>(level));
  return 0;
}

int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level* level) {
  if (!ValidThreshold(threshold) || level == nullptr) return RPMA_E_INVAL;
  *level = static_cast<enum rpma_log_level>(
      rpma_sim::LogGetThreshold(static_cast<rpma_sim::LogThreshold>(threshold)));
  return 0;
}

int rpma_log_set_function(rpma_log_function* log_function) {
  g_user_function.store(log_function);
  rpma_sim::LogSetSink(log_function == RPMA_LOG_USE_DEFAULT_FUNCTION ? nullptr
                                                                     : &UserFunctionSink);
  return 0;
}
