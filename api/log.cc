// log.cc -- rpma_log_*: thresholds and the replaceable log function.
//
// A user's rpma_log_function is installed as the simulator's log function itself, so it is
// called exactly as librpma calls it: (level, file, line, function, format, arguments...).
#include <librpma.h>

#include "sim/common/log.h"

#include "api/api_prologue.h"

namespace {

bool ValidThreshold(enum rpma_log_threshold threshold) {
  return threshold == RPMA_LOG_THRESHOLD || threshold == RPMA_LOG_THRESHOLD_AUX;
}

}  // namespace

int rpma_log_set_threshold(enum rpma_log_threshold threshold, enum rpma_log_level level) {
  RPMA_API_PROLOGUE();
  if (!ValidThreshold(threshold)) return RPMA_E_INVAL;
  if (level < RPMA_LOG_DISABLED || level > RPMA_LOG_LEVEL_DEBUG) return RPMA_E_INVAL;
  rpma_sim::LogSetThreshold(static_cast<rpma_sim::LogThreshold>(threshold),
                            static_cast<rpma_sim::LogLevel>(level));
  return 0;
}

int rpma_log_get_threshold(enum rpma_log_threshold threshold, enum rpma_log_level* level) {
  RPMA_API_PROLOGUE();
  if (!ValidThreshold(threshold) || level == nullptr) return RPMA_E_INVAL;
  *level = static_cast<enum rpma_log_level>(
      rpma_sim::LogGetThreshold(static_cast<rpma_sim::LogThreshold>(threshold)));
  return 0;
}

int rpma_log_set_function(rpma_log_function* log_function) {
  RPMA_API_PROLOGUE();
  // enum rpma_log_level and rpma_sim::LogLevel are both int-sized with the same values, so
  // the two function types share one calling convention.
  static_assert(sizeof(enum rpma_log_level) == sizeof(rpma_sim::LogLevel), "same ABI");
  rpma_sim::LogSetFunction(reinterpret_cast<rpma_sim::LogFunction>(log_function));
  return 0;
}
