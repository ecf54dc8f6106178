// trace_close_test.cc -- trace::Close is safe to call from two threads at once (a power
// failure's exit on the engine thread while the application exits): the file ends as one
// JSON array, and neither call touches the file after the other unmapped it.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sim/common/trace.h"

namespace rpma_sim {
namespace {

// The file this process traces into: set before the trace is first used (its first use
// reads RPMA_SIM_TRACE).
std::string TracePath() {
  static const std::string path = [] {
    const char* dir = getenv("TEST_TMPDIR");
    std::string name = std::string(dir != nullptr ? dir : "/tmp") + "/trace_close_test." +
                       std::to_string(getpid()) + ".json";
    setenv("RPMA_SIM_TRACE", name.c_str(), 1);
    return name;
  }();
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(TraceCloseTest, TwoThreadsClosingAtOnceEndTheArrayOnce) {
  const std::string path = TracePath();
  trace::OpenAtLoad();
  ASSERT_TRUE(trace::On()) << "not tracing into " << path;
  for (int i = 0; i < 1000; ++i) trace::Instant(trace::kProcessTrack, "test", "event", "");
  std::vector<std::thread> closers;
  for (int i = 0; i < 4; ++i) closers.emplace_back([] { trace::Close(); });
  for (std::thread& closer : closers) closer.join();
  trace::Close();  // as atexit does afterwards
  EXPECT_FALSE(trace::On());
  const std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ('[', text.front());
  EXPECT_EQ("]\n", text.substr(text.size() - 2));
  size_t ends = 0;
  for (size_t at = text.find("end of trace"); at != std::string::npos;
       at = text.find("end of trace", at + 1))
    ++ends;
  EXPECT_EQ(1u, ends);
  unlink(path.c_str());
}

}  // namespace
}  // namespace rpma_sim
