// librpma_fault_points_test.cc -- RPMA_FAULT_INJECTION=N as librpma built with
// DEBUG_FAULT_INJECTION has it: every point passed prints `[#i]` on stderr in the default log
// format at DEBUG, whatever the thresholds and the log function; the Nth prints
// `[#N] [FAULT INJECTION: "<rpma_err_2str(code)>"]` and fails with librpma's code (a point at
// a function's start: no effect; at its end: the work is done); unset or <= 0, nothing.
// Each case runs this binary again as a child (FAULT_POINTS_CHILD=1) with its own
// environment, its stdout and stderr captured.
#include <gtest/gtest.h>
#include <librpma.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

int g_log_calls = 0;
void CountingLog(enum rpma_log_level, const char*, const int, const char*, const char*, ...) {
  ++g_log_calls;
}

// The RESULT lines of a child that got through every call, as RunChild joins them.
std::string AllResults(int set, int get, int timeout, int del) {
  return "new=0 set=" + std::to_string(set) + " get=" + std::to_string(get) +
         " timeout=" + std::to_string(timeout) + " delete=" + std::to_string(del) +
         " deleted=1 delete_null=0 log_calls=0 ";
}

// In a child: the calls whose points the parent counts, and what each returned.
TEST(LibrpmaFaultPointsTest, Child) {
  if (getenv("FAULT_POINTS_CHILD") == nullptr) GTEST_SKIP() << "runs as a child only";
  // An application's own log function does not receive the markers.
  ASSERT_EQ(0, rpma_log_set_function(&CountingLog));
  rpma_conn_cfg* cfg = nullptr;
  int ret = rpma_conn_cfg_new(&cfg);  // point 1: NOMEM, at the start
  printf("RESULT new=%d\n", ret);
  if (ret != 0) return;
  ret = rpma_conn_cfg_set_timeout(cfg, 1234);  // point 2: INVAL, at the start
  printf("RESULT set=%d\n", ret);
  int timeout = -1;
  ret = rpma_conn_cfg_get_timeout(cfg, &timeout);  // point 3: INVAL, at the end
  printf("RESULT get=%d timeout=%d\n", ret, timeout);
  ret = rpma_conn_cfg_delete(&cfg);  // point 4: INVAL, at the end
  printf("RESULT delete=%d deleted=%d\n", ret, cfg == nullptr ? 1 : 0);
  ret = rpma_conn_cfg_delete(&cfg);  // a NULL object: no point
  printf("RESULT delete_null=%d\n", ret);
  printf("RESULT log_calls=%d\n", g_log_calls);
}

struct ChildRun {
  std::string results;               // its RESULT lines, "name=value ..." joined by spaces
  std::vector<std::string> markers;  // its stderr lines that carry a marker
};

ChildRun RunChild(const char* injection) {
  std::string err = std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
                    "/fault_points." + std::to_string(getpid()) + ".err";
  std::string command =
      "env -u XML_OUTPUT_FILE -u TEST_PREMATURE_EXIT_FILE -u GTEST_OUTPUT "
      "-u RPMA_FAULT_INJECTION FAULT_POINTS_CHILD=1 ";
  if (injection != nullptr) command += std::string("RPMA_FAULT_INJECTION=") + injection + " ";
  command += "/proc/" + std::to_string(getpid()) +
             "/exe --gtest_filter=LibrpmaFaultPointsTest.Child 2>" + err;
  ChildRun run;
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) return run;
  char line[512];
  while (fgets(line, sizeof(line), child) != nullptr) {
    std::string text = line;
    if (text.rfind("RESULT ", 0) == 0) run.results += text.substr(7, text.size() - 8) + " ";
  }
  pclose(child);
  std::ifstream in(err);
  std::string text;
  while (std::getline(in, text))
    if (text.find("[#") != std::string::npos) run.markers.push_back(text);
  unlink(err.c_str());
  return run;
}

bool IsChild() { return getenv("FAULT_POINTS_CHILD") != nullptr; }

TEST(LibrpmaFaultPointsTest, EveryPointPrintsItsMarkerInLibrpmasFormat) {
  if (IsChild()) GTEST_SKIP();
  ChildRun run = RunChild("999999");
  EXPECT_EQ(AllResults(0, 0, 1234, 0), run.results);
  const char* functions[] = {"rpma_conn_cfg_new", "rpma_conn_cfg_set_timeout",
                             "rpma_conn_cfg_get_timeout", "rpma_conn_cfg_delete"};
  ASSERT_EQ(4u, run.markers.size());
  for (int i = 0; i < 4; ++i) {
    std::regex line(
        "[A-Z][a-z]{2} [ 0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6} \\[[0-9]+\\] "
        "\\*DEBUG\\* [a-z_]+\\.cc: +[0-9]+: " +
        std::string(functions[i]) + ": \\[#" + std::to_string(i + 1) + "\\]");
    EXPECT_TRUE(std::regex_match(run.markers[i], line)) << run.markers[i];
  }
}

TEST(LibrpmaFaultPointsTest, TheNthPointFailsWithLibrpmasCode) {
  if (IsChild()) GTEST_SKIP();
  ChildRun first = RunChild("1");  // rpma_conn_cfg_new: NOMEM, nothing made
  EXPECT_EQ("new=" + std::to_string(RPMA_E_NOMEM) + " ", first.results);
  ASSERT_EQ(1u, first.markers.size());
  EXPECT_NE(std::string::npos,
            first.markers[0].find("rpma_conn_cfg_new: [#1] [FAULT INJECTION: \"Out of memory\"]"))
      << first.markers[0];

  ChildRun second = RunChild("2");  // set_timeout fails at its start: no effect
  EXPECT_EQ(AllResults(RPMA_E_INVAL, 0, 1000, 0), second.results);
  ASSERT_EQ(4u, second.markers.size());
  EXPECT_NE(std::string::npos,
            second.markers[1].find("[#2] [FAULT INJECTION: \"Invalid argument\"]"));
  EXPECT_NE(std::string::npos, second.markers[2].find("[#3]"));  // later points still count
  int lines_of_2 = 0;  // the failing point prints its FAULT INJECTION line only
  for (const std::string& marker : second.markers)
    if (marker.find("[#2]") != std::string::npos) ++lines_of_2;
  EXPECT_EQ(1, lines_of_2);

  ChildRun third = RunChild("3");  // get_timeout fails at its end: the value is out
  EXPECT_EQ(AllResults(0, RPMA_E_INVAL, 1234, 0), third.results);
  ChildRun fourth = RunChild("4");  // delete fails at its end: deleted all the same
  EXPECT_EQ(AllResults(0, 0, 1234, RPMA_E_INVAL), fourth.results);
}

TEST(LibrpmaFaultPointsTest, UnsetZeroOrNegativeDisablesIt) {
  if (IsChild()) GTEST_SKIP();
  for (const char* value : {static_cast<const char*>(nullptr), "0", "-3", "abc"}) {
    ChildRun run = RunChild(value);
    EXPECT_EQ(AllResults(0, 0, 1234, 0), run.results) << (value ? value : "unset");
    EXPECT_TRUE(run.markers.empty()) << (value ? value : "unset");
  }
}

}  // namespace
