// log.h -- the simulator's logging core, behind librpma's log API.
//
// Two thresholds as in librpma: a message reaches the log function only when its level is at
// or below THRESHOLD; the default function sends it to syslog ("rpma", LOG_LOCAL7) and, when
// it is also at or below AUX, to stderr in librpma's format. api/log.cc lets the user replace
// the function (rpma_log_set_function), which then receives each call's own format string
// and arguments, as librpma's does. Defaults: THRESHOLD = WARNING, AUX = DISABLED, as in
// librpma's release build.
#ifndef RPMA_SIM_COMMON_LOG_H_
#define RPMA_SIM_COMMON_LOG_H_

namespace rpma_sim {

// Same numeric values as enum rpma_log_level.
enum class LogLevel : int {
  kDisabled = -1,
  kFatal = 0,
  kError = 1,
  kWarning = 2,
  kNotice = 3,
  kInfo = 4,
  kDebug = 5,
};

// Same numeric values as enum rpma_log_threshold.
enum class LogThreshold : int { kMain = 0, kAux = 1 };

// A log function, with the same calling convention as librpma's rpma_log_function (its
// first parameter is an int-sized enum with the same values). `file` may be NULL when the
// caller has no source location. Called with the caller's own format and arguments.
using LogFunction = void (*)(LogLevel level, const char* file, int line, const char* function,
                             const char* format, ...);

// Never called: lets the compiler check every log call's format against its arguments.
void CheckLogFormat(const char* format, ...) __attribute__((format(printf, 1, 2)));

void LogSetThreshold(LogThreshold which, LogLevel level);
LogLevel LogGetThreshold(LogThreshold which);

// Installs `function` as the log function; nullptr restores the default.
void LogSetFunction(LogFunction function);

// The default function: syslog when level <= THRESHOLD, stderr when level <= AUX, in
// librpma's format.
void DefaultLogFunction(LogLevel level, const char* file, int line, const char* function,
                        const char* format, ...) __attribute__((format(printf, 5, 6)));

// What librpma's RPMA_LOG_ALWAYS does: a DEBUG line in the default function's stderr format,
// whatever the thresholds and whatever function the application installed; never syslog.
// `format` ends with its own "\n", as RPMA_LOG_ALWAYS's does.
void LogAlways(const char* file, int line, const char* function, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

// The function to call for a message at `level`, or nullptr when `level` is above the main
// threshold (the message is then dropped without being formatted).
LogFunction LogFunctionFor(LogLevel level);

}  // namespace rpma_sim

// As librpma's RPMA_LOG_*: the format (a string literal) gets a "\n", which the log function
// (the application's, or the default) receives as part of the message.
#define RPMA_SIM_LOG(level, format, ...)                                                \
  do {                                                                                  \
    if (false) ::rpma_sim::CheckLogFormat(format, ##__VA_ARGS__);                       \
    ::rpma_sim::LogFunction log_function_ = ::rpma_sim::LogFunctionFor(level);          \
    if (log_function_ != nullptr)                                                       \
      log_function_((level), __FILE__, __LINE__, __func__, format "\n", ##__VA_ARGS__); \
  } while (0)
#define SIM_LOG_ERROR(...) RPMA_SIM_LOG(::rpma_sim::LogLevel::kError, __VA_ARGS__)
#define SIM_LOG_WARNING(...) RPMA_SIM_LOG(::rpma_sim::LogLevel::kWarning, __VA_ARGS__)
#define SIM_LOG_NOTICE(...) RPMA_SIM_LOG(::rpma_sim::LogLevel::kNotice, __VA_ARGS__)
#define SIM_LOG_INFO(...) RPMA_SIM_LOG(::rpma_sim::LogLevel::kInfo, __VA_ARGS__)
#define SIM_LOG_DEBUG(...) RPMA_SIM_LOG(::rpma_sim::LogLevel::kDebug, __VA_ARGS__)

#endif  // RPMA_SIM_COMMON_LOG_H_
