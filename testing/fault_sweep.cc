// fault_sweep.cc -- a test body run once per librpma fault point, each run in a child process
// (test_child.h) where the Nth point the body passes fails, as api/tools/rpma-sim-sweep runs
// a whole program: a table of what each point did, and a failure naming the bad ones.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>

#include <gtest/gtest-spi.h>

#include "rpma_sim/testing.h"
#include "testing/test_child.h"

namespace rpma_sim {
namespace testing {
namespace {

constexpr char kSweepRole[] = "sweep ";
constexpr int kOutputLinesShown = 15;

// In the child: fail the nth point inside body, report and exit. The failures of the body's
// thread are taken here (and printed), not by a reporter the test may have put around the
// sweep (EXPECT_NONFATAL_FAILURE's, for one), so they count wherever the sweep runs; those
// of other threads reach the test.
[[noreturn]] void RunOnePoint(const std::function<void()>& body, int64_t n, int fd) {
  ::testing::TestPartResultArray results;
  int64_t passed = 0;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    (void)rpma_sim_fault_point_set(n);
    body();
    (void)rpma_sim_fault_point_passed(&passed);
    (void)rpma_sim_fault_point_set(0);
  }
  int failed = 0;
  for (int i = 0; i < results.size(); ++i) {
    const ::testing::TestPartResult& result = results.GetTestPartResult(i);
    if (!result.failed()) continue;
    ++failed;
    printf("%s:%d: Failure\n%s\n", result.file_name() != nullptr ? result.file_name() : "?",
           result.line_number(), result.message());
  }
  if (::testing::Test::HasFailure()) ++failed;
  (void)WriteLineTo(fd, "REPORT " + std::to_string(passed) + " " + (failed > 0 ? "1" : "0"));
  fflush(stdout);
  fflush(stderr);
  _exit(0);
}

// A file the child writes its output to, removed at once (the descriptor keeps it).
int NewOutputFile() {
  const char* dir = getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/rpma-sim-sweep.XXXXXX";
  int fd = mkstemp(&path[0]);
  if (fd >= 0) unlink(path.c_str());
  return fd;
}

std::string ReadAll(int fd) {
  std::string text;
  char chunk[4096];
  ssize_t n;
  for (off_t offset = 0; (n = pread(fd, chunk, sizeof(chunk), offset)) > 0; offset += n)
    text.append(chunk, static_cast<size_t>(n));
  return text;
}

// The function and error of the marker `... function: [#n] [FAULT INJECTION: "error"]`.
void FindInjection(const std::string& output, int64_t n, PointResult* result) {
  const std::string marker = "[#" + std::to_string(n) + "] [FAULT INJECTION: \"";
  size_t at = output.find(marker);
  if (at == std::string::npos || at < 2) return;
  size_t name_end = at - 2;  // before ": "
  size_t name_begin = output.rfind(' ', name_end);
  result->function = output.substr(name_begin + 1, name_end - name_begin - 1);
  size_t error_begin = at + marker.size();
  result->error = output.substr(error_begin, output.find('"', error_begin) - error_begin);
}

std::string LastLines(const std::string& output, int lines) {
  size_t at = output.size();
  for (int i = 0; i <= lines && at != std::string::npos && at > 0; ++i)
    at = output.rfind('\n', at - 1);
  return at == std::string::npos ? output : output.substr(at + 1);
}

// Runs the nth point in a child. *passed gets the points the run passed (-1 if it did not
// report).
PointResult RunInChild(int64_t n, const SweepOptions& options, int64_t* passed) {
  PointResult result;
  result.point = n;
  *passed = -1;
  int output = NewOutputFile();
  TestChild child;
  if (output < 0 || !child.Start(kSweepRole + std::to_string(n), output)) {
    if (output >= 0) close(output);
    result.outcome = PointOutcome::kExited;
    result.detail = std::string("cannot start the child: ") + strerror(errno);
    return result;
  }
  const long long deadline = NowMs() + options.timeout_ms;
  std::string line;
  int failed = 0;
  long long passed_points = -1;
  if (child.ReadLine(options.timeout_ms, &line) &&
      sscanf(line.c_str(), "REPORT %lld %d", &passed_points, &failed) == 2)
    *passed = passed_points;
  int status = 0;
  long long left = deadline - NowMs();
  bool ended = child.Wait(left > 0 ? static_cast<int>(left) : 0, &status);
  std::string text = ReadAll(output);
  close(output);
  FindInjection(text, n, &result);
  if (!ended) {
    result.outcome = PointOutcome::kHung;
    result.detail = "killed after " + std::to_string(options.timeout_ms) + " ms";
  } else if (WIFSIGNALED(status)) {
    result.outcome = PointOutcome::kCrashed;
    result.detail =
        "signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  } else if (*passed < 0) {
    result.outcome = PointOutcome::kExited;
    result.detail = "exit status " + std::to_string(WEXITSTATUS(status));
  } else if (failed != 0) {
    result.outcome = PointOutcome::kFailed;
  }
  if (result.outcome != PointOutcome::kPassed)
    result.detail += "\n    the child's last lines:\n" + LastLines(text, kOutputLinesShown);
  return result;
}

void PrintRow(const PointResult& result) {
  printf("%5lld  %-36s %-30s %s\n", static_cast<long long>(result.point), result.function.c_str(),
         result.error.c_str(), PointOutcomeName(result.outcome));
}

}  // namespace

const char* PointOutcomeName(PointOutcome outcome) {
  switch (outcome) {
    case PointOutcome::kPassed:
      return "passed";
    case PointOutcome::kFailed:
      return "FAILED an expectation";
    case PointOutcome::kCrashed:
      return "CRASHED";
    case PointOutcome::kHung:
      return "HUNG";
    case PointOutcome::kExited:
      return "EXITED";
  }
  return "?";
}

std::vector<PointResult> SweepFaultPoints(const std::function<void()>& body,
                                          const SweepOptions& options) {
  std::string role;
  int fd = -1;
  if (ChildRole(&role, &fd) && role.rfind(kSweepRole, 0) == 0)
    RunOnePoint(body, atoll(role.c_str() + strlen(kSweepRole)), fd);

  std::vector<PointResult> results;
  std::ostringstream bad;
  printf("point  %-36s %-30s result\n", "function", "error injected");
  for (int64_t n = options.first_point; n < options.first_point + options.max_points; ++n) {
    int64_t passed = -1;
    PointResult result = RunInChild(n, options, &passed);
    const bool last = passed >= 0 && passed < n;  // no point of this run failed
    if (last && result.outcome == PointOutcome::kPassed)
      printf("%5lld  no fault fired: %lld points in all\n", static_cast<long long>(n),
             static_cast<long long>(passed));
    else
      PrintRow(result);
    if (result.outcome != PointOutcome::kPassed)
      bad << "\n  point " << n << " (" << (last ? "none fired" : result.function) << ", "
          << result.error << "): " << PointOutcomeName(result.outcome) << ", " << result.detail;
    results.push_back(result);
    if (last) break;
  }
  fflush(stdout);
  if (!bad.str().empty()) ADD_FAILURE() << "fault points that went wrong:" << bad.str();
  return results;
}

}  // namespace testing
}  // namespace rpma_sim
