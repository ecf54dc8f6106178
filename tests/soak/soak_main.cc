// soak_main.cc -- the soak program: runs SoakDriver with one seed on each transport asked for,
// each in a child process of its own (RPMA_SIM_TRANSPORT is read once per process), at the same
// time, and prints each summary and the total. Exits 0 only if every run passed.
//
//   soak [--seed S] [--ops N] [--transports inproc,shm,tcp] [--no-faults] [--no-power-failures]
//
// N is the total; each transport runs N / (number of transports). The seed is printed first;
// the same seed posts the same operations and puts the same rules in force.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "tests/soak/soak_driver.h"

namespace {

void Usage() {
  fprintf(stderr,
          "usage: soak [--seed S] [--ops N] [--transports inproc,shm,tcp] [--no-faults] "
          "[--no-power-failures]\n");
  exit(2);
}

std::vector<std::string> Split(const std::string& list) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) parts.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// Runs one transport in this (child) process; writes its stats to `out_fd`.
[[noreturn]] void RunChild(soak::SoakOptions options, int out_fd) {
  setenv("RPMA_SIM_TRANSPORT", options.transport.c_str(), 1);
  // The torn power failures draw their words and lines from the simulator's seed.
  setenv("RPMA_SIM_SEED", std::to_string(options.seed).c_str(), 1);
  auto start = std::chrono::steady_clock::now();
  soak::SoakDriver driver(options);
  driver.Run();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char title[200];
  snprintf(title, sizeof(title), "soak: %s: %llu operations passed in %.1f s",
           options.transport.c_str(), (unsigned long long)options.operations, seconds);
  soak::PrintSummary(title, driver.stats(), stdout);
  fflush(stdout);
  if (write(out_fd, &driver.stats(), sizeof(soak::Stats)) != sizeof(soak::Stats)) _exit(1);
  _exit(0);
}

}  // namespace

int main(int argc, char** argv) {
  soak::SoakOptions options;
  options.seed = std::random_device()() | (uint64_t(std::random_device()()) << 32);
  std::string transports = "inproc,shm,tcp";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seed" && i + 1 < argc)
      options.seed = strtoull(argv[++i], nullptr, 0);
    else if (arg == "--ops" && i + 1 < argc)
      options.operations = strtoull(argv[++i], nullptr, 0);
    else if (arg == "--transports" && i + 1 < argc)
      transports = argv[++i];
    else if (arg == "--no-faults")
      options.faults = false;
    else if (arg == "--no-power-failures")
      options.power_failures = false;
    else
      Usage();
  }
  std::vector<std::string> names = Split(transports);
  if (names.empty() || options.operations < names.size()) Usage();
  for (const std::string& name : names)
    if (name != "inproc" && name != "shm" && name != "tcp") Usage();
  printf("soak: seed %llu (--seed %llu replays it), %llu operations over %s\n",
         (unsigned long long)options.seed, (unsigned long long)options.seed,
         (unsigned long long)options.operations, transports.c_str());
  fflush(stdout);

  auto start = std::chrono::steady_clock::now();
  struct Child {
    pid_t pid;
    int fd;
    std::string name;
  };
  std::vector<Child> children;
  for (const std::string& name : names) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    soak::SoakOptions child = options;
    child.transport = name;
    child.operations = options.operations / names.size();
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      close(fds[0]);
      RunChild(child, fds[1]);
    }
    close(fds[1]);
    children.push_back(Child{pid, fds[0], name});
  }
  soak::Stats total;
  bool passed = true;
  for (const Child& child : children) {
    soak::Stats stats;
    ssize_t got = read(child.fd, &stats, sizeof(stats));
    close(child.fd);
    int status = 0;
    waitpid(child.pid, &status, 0);
    if (got != sizeof(stats) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      printf("soak: %s FAILED (%s %d)\n", child.name.c_str(),
             WIFSIGNALED(status) ? "signal" : "exit status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
      passed = false;
      continue;
    }
    soak::Accumulate(&total, stats);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char title[200];
  snprintf(title, sizeof(title), "soak: seed %llu, %s: %s in %.1f s",
           (unsigned long long)options.seed, transports.c_str(), passed ? "PASSED" : "FAILED",
           seconds);
  soak::PrintSummary(title, total, stdout);
  return passed ? 0 : 1;
}
