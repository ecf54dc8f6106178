// kept_log.h -- a log function for rpma_log_set_function that keeps the library's WARNING
// and ERROR lines, for tests that assert what a failure logged. It may be called on the
// progress engine's thread as well as the test's.
#ifndef RPMA_SIM_TESTS_COMMON_KEPT_LOG_H_
#define RPMA_SIM_TESTS_COMMON_KEPT_LOG_H_

#include <librpma.h>

#include <string>

// Install with rpma_log_set_function(KeepLogLine).
void KeepLogLine(rpma_log_level level, const char* file, const int line, const char* function,
                 const char* format, ...);

// Every line kept so far, each ending in a newline.
std::string LoggedLines();

// Forgets the lines kept so far (a test of several cases, each asserting its own).
void ForgetLoggedLines();

#endif  // RPMA_SIM_TESTS_COMMON_KEPT_LOG_H_
