// rpma_sim_crash.cc -- rpma-sim-crash: every crash state of a whole program's run, judged by a
// recovery check (docs/crash-states.md).
//
//   rpma-sim-crash [--torn N] [--max-states M] [--timeout S] [--ready REGEX] [--seed S]
//                  -- SERVER... -- CLIENT... -- CHECK...
//
// SERVER runs with RPMA_SIM_CRASH_JOURNAL set, so that its nodes record their crash points;
// once its output matches --ready (default "listening"), CLIENT runs to its end (an empty
// CLIENT: the server runs both sides itself); then the server must exit by itself. For each
// crash state of each node that has points, the files of its file-backed regions are copied
// with the state's image in place and CHECK runs on the copy ("{file}" in CHECK is replaced
// by its path, or it is appended): exit 0 means recovered. Prints the lint, a table of
// states (point, loss, result, what reverted, operation), and for each failing state the
// line that makes an ordinary run fail there. --torn N adds the torn states by words and
// lines: each unit alone and N seeded subsets. Exits 1 if a state failed, 2 if the run could
// not be explored (bad usage, a server or client that cannot run, a CHECK that cannot run,
// a recording cut short at the journal's limit).
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <rpma_sim.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

using Command = std::vector<std::string>;

struct Options {
  unsigned torn = 0;
  uint64_t max_states = 0;
  int timeout_s = 60;
  std::string ready = "listening";
  uint64_t seed = 1;
  Command server, client, check;
};

[[noreturn]] void Usage(const char* why) {
  fprintf(stderr,
          "rpma-sim-crash: %s\n"
          "usage: rpma-sim-crash [--torn N] [--max-states M] [--timeout S] [--ready REGEX]\n"
          "                      [--seed S] -- SERVER... -- CLIENT... -- CHECK...\n",
          why);
  exit(2);
}

// A whole number from 0 to `most`, in decimal; anything else is a usage error.
uint64_t Number(const char* option, const char* text, uint64_t most) {
  char* end = nullptr;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (!isdigit(static_cast<unsigned char>(*text)) || *end != '\0' || errno == ERANGE ||
      value > most)
    Usage(
        (std::string(option) + " takes a whole number from 0 to " + std::to_string(most)).c_str());
  return value;
}

Options Parse(int argc, char** argv) {
  Options options;
  int i = 1;
  for (; i < argc && strcmp(argv[i], "--") != 0; ++i) {
    const std::string option = argv[i];
    if (i + 1 >= argc) Usage((option + " needs a value").c_str());
    const char* value = argv[++i];
    if (option == "--torn") {
      options.torn = static_cast<unsigned>(Number("--torn", value, UINT32_MAX));
    } else if (option == "--max-states") {
      options.max_states = Number("--max-states", value, UINT64_MAX);
    } else if (option == "--timeout") {
      // At least a second, at most a day (the deadlines are milliseconds in 64 bits).
      options.timeout_s = static_cast<int>(Number("--timeout", value, 86400));
      if (options.timeout_s == 0) Usage("--timeout takes a whole number from 1 to 86400");
    } else if (option == "--ready") {
      // Checked here, before anything runs (a usage error leaves no server behind).
      regex_t ready;
      if (regcomp(&ready, value, REG_EXTENDED | REG_NOSUB) != 0)
        Usage("--ready is not a regular expression");
      regfree(&ready);
      options.ready = value;
    } else if (option == "--seed") {
      options.seed = Number("--seed", value, UINT64_MAX);
    } else {
      Usage(("unknown option " + option).c_str());
    }
  }
  Command* commands[] = {&options.server, &options.client, &options.check};
  int part = -1;
  for (; i < argc; ++i) {
    if (strcmp(argv[i], "--") == 0 && part < 2) {
      ++part;
      continue;
    }
    if (part < 0) Usage("the commands come after --");
    commands[part]->push_back(argv[i]);
  }
  if (options.server.empty() || options.check.empty())
    Usage("SERVER and CHECK are needed (CLIENT may be empty)");
  return options;
}

int64_t NowMs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

// A process the tool runs: its output (stdout and stderr) comes through a pipe, its end
// through a pidfd, both waited on with poll.
struct Child {
  pid_t pid = -1;
  int pidfd = -1;
  int out = -1;
  std::string output;
  bool ended = false;
  int status = 0;
};

// Starts `command` with `env` added. False, with errno saying why, if it cannot: also when
// the command cannot be executed (the child tells the parent through a close-on-exec pipe,
// which an exec that succeeds closes empty).
bool Start(const Command& command, const std::map<std::string, std::string>& env, Child* child) {
  int pipe_fds[2];
  int exec_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return false;
  if (pipe2(exec_fds, O_CLOEXEC) != 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return false;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    for (const auto& entry : env) setenv(entry.first.c_str(), entry.second.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int error = errno;
    (void)!write(exec_fds[1], &error, sizeof(error));
    _exit(127);
  }
  const int fork_error = errno;
  close(pipe_fds[1]);
  close(exec_fds[1]);
  int exec_error = 0;
  ssize_t got = 0;
  if (pid > 0) {
    do {
      got = read(exec_fds[0], &exec_error, sizeof(exec_error));
    } while (got < 0 && errno == EINTR);
  }
  close(exec_fds[0]);
  if (pid < 0 || got == static_cast<ssize_t>(sizeof(exec_error))) {
    close(pipe_fds[0]);
    if (pid > 0) waitpid(pid, nullptr, 0);
    errno = pid < 0 ? fork_error : exec_error;
    return false;
  }
  child->pid = pid;
  child->pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  child->out = pipe_fds[0];
  return child->pidfd >= 0;
}

// Takes what the children say and notes who ended, until `done()` holds or `deadline_ms`.
// True if done() holds.
bool Pump(const std::vector<Child*>& children, int64_t deadline_ms,
          const std::function<bool()>& done) {
  while (!done()) {
    std::vector<pollfd> fds;
    for (Child* child : children) {
      if (child->out >= 0) fds.push_back(pollfd{child->out, POLLIN, 0});
      if (!child->ended) fds.push_back(pollfd{child->pidfd, POLLIN, 0});
    }
    const int64_t left = deadline_ms - NowMs();
    if (fds.empty() || left <= 0) return done();
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) return done();
    for (Child* child : children) {
      pollfd readable{child->out, POLLIN, 0};
      if (child->out >= 0 && poll(&readable, 1, 0) == 1) {
        char buffer[4096];
        ssize_t n = read(child->out, buffer, sizeof(buffer));
        if (n > 0) child->output.append(buffer, static_cast<size_t>(n));
        if (n == 0) {
          close(child->out);
          child->out = -1;
        }
      }
      if (!child->ended && waitpid(child->pid, &child->status, WNOHANG) == child->pid) {
        child->ended = true;
        close(child->pidfd);
      }
    }
  }
  return true;
}

// Kills a child that has not ended, and reaps it.
void Kill(Child* child) {
  if (child->pid > 0 && !child->ended) {
    kill(child->pid, SIGKILL);
    waitpid(child->pid, &child->status, 0);
    child->ended = true;
    close(child->pidfd);
  }
  if (child->out >= 0) close(child->out);
  child->out = -1;
}

// Ended, and everything it said was read.
bool Ended(const Child& child) { return child.ended && child.out < 0; }

bool EndedWell(const Child& child) {
  return child.ended && WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0;
}

// The last line a child said.
std::string LastLine(std::string said) {
  while (!said.empty() && said.back() == '\n') said.pop_back();
  size_t last = said.rfind('\n');
  return last == std::string::npos ? said : said.substr(last + 1);
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

bool WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(file);
}

// Removes the tool's directory and what it put there.
void RemoveDirectory(const std::string& dir) {
  if (DIR* entries = opendir(dir.c_str())) {
    while (dirent* entry = readdir(entries))
      if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
        unlink((dir + "/" + entry->d_name).c_str());
    closedir(entries);
  }
  rmdir(dir.c_str());
}

// `command` as a shell reads it back: a word with anything but letters, digits and
// @%+=:,./_- in single quotes (an inner ' as '\''), an empty word as ''.
std::string Quoted(const Command& command) {
  static const char kSafe[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-";
  std::string line;
  for (const std::string& word : command) {
    line += line.empty() ? "" : " ";
    if (!word.empty() && word.find_first_not_of(kSafe) == std::string::npos) {
      line += word;
      continue;
    }
    line += '\'';
    for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

const char* LossName(rpma_sim_loss loss) {
  return loss == RPMA_SIM_LOSS_WORDS ? "words" : loss == RPMA_SIM_LOSS_LINES ? "lines" : "all";
}

// The exploration of one node's journal.
struct Exploration {
  const Options* options;
  std::string workdir;
  std::map<std::string, std::string> files;  // each region file's contents after the run
  uint64_t failed = 0;
  std::vector<std::string> replays;
  std::string cannot_check;  // why the check cannot run (the exploration stops)
};

// The files as the crash left them: the run's contents, each region's image in place; the
// path of the copy of the first.
std::string WriteStateFiles(const rpma_sim_crash_state& state, const Exploration& run) {
  std::map<std::string, std::string> copies;
  for (size_t i = 0; i < state.regions; ++i) {
    const rpma_sim_crash_region& region = state.region[i];
    auto found = run.files.find(region.file);
    if (*region.file == '\0' || found == run.files.end()) continue;
    std::string& copy = copies.emplace(region.file, found->second).first->second;
    if (copy.size() < region.file_offset + region.length)
      copy.resize(region.file_offset + region.length);
    memcpy(&copy[region.file_offset], region.image, region.length);
  }
  std::string first;
  int index = 0;
  for (const auto& entry : copies) {
    const std::string path = run.workdir + "/state-" + std::to_string(index++);
    WriteFile(path, entry.second);
    if (first.empty()) first = path;
  }
  return first;
}

// A row of the table of states: point, loss, result, what reverted, the operation; a failing
// row is followed by what the check said, indented to the "what reverted" column.
constexpr char kRow[] = "%6s  %-5s  %-9s  %-54s  %s\n";
constexpr int kReasonIndent = 6 + 2 + 5 + 2 + 9 + 2;

int CheckState(const rpma_sim_crash_state* state, void* arg) {
  Exploration& run = *static_cast<Exploration*>(arg);
  const std::string file = WriteStateFiles(*state, run);
  Command check = run.options->check;
  bool placed = false;
  for (std::string& word : check) {
    size_t at = word.find("{file}");
    if (at == std::string::npos) continue;
    word.replace(at, 6, file);
    placed = true;
  }
  if (!placed) check.push_back(file);
  Child child;
  std::string why;  // empty: recovered
  if (!Start(check, {{"RPMA_SIM_CRASH_FILE", file}}, &child)) {
    // No verdict on the state: nothing can be judged.
    run.cannot_check = "cannot run the check " + check[0] + ": " + strerror(errno);
    Kill(&child);
    return 1;
  }
  if (!Pump({&child}, NowMs() + run.options->timeout_s * 1000LL,
            [&child] { return Ended(child); })) {
    Kill(&child);
    why = "hung: killed after " + std::to_string(run.options->timeout_s) + " s";
  } else if (!EndedWell(child)) {
    why = WIFSIGNALED(child.status)
              ? "killed by signal " + std::to_string(WTERMSIG(child.status)) + ": "
              : "exit " + std::to_string(WEXITSTATUS(child.status)) + ": ";
    why += LastLine(child.output);
  }
  printf(kRow, std::to_string(state->point).c_str(), LossName(state->loss),
         why.empty() ? "recovered" : "FAILED", state->reverted, state->event);
  if (!why.empty()) printf("%*s%s\n", kReasonIndent, "", why.c_str());
  fflush(stdout);
  if (!why.empty()) {
    ++run.failed;
    const Options& o = *run.options;
    std::string replay = "point " + std::to_string(state->point) + " (" + state->reverted + "):";
    if (*state->rule == '\0') {
      // After the last point no rule stops the run: the power fails at its end.
      replay += "\n    after the last point: call rpma_sim_power_failure(peer, RPMA_SIM_LOSS_" +
                std::string(state->loss == RPMA_SIM_LOSS_WORDS   ? "WORDS"
                            : state->loss == RPMA_SIM_LOSS_LINES ? "LINES"
                                                                 : "ALL") +
                ") as the server's run ends" +
                (state->seed != 0 ? ", with RPMA_SIM_SEED=" + std::to_string(state->seed) : "");
      run.replays.push_back(replay);
      return 0;
    }
    replay += "\n    RPMA_SIM_FAULTS='" + std::string(state->rule) + ",exit=1'";
    if (state->seed != 0) replay += " RPMA_SIM_SEED=" + std::to_string(state->seed);
    replay += " " + Quoted(o.server);
    if (!o.client.empty()) replay += "\n    " + Quoted(o.client);
    replay += "\n    " + Quoted(o.check);
    run.replays.push_back(replay);
  }
  return 0;
}

void PrintFinding(const char* line, void*) { printf("lint: %s\n", line); }

// The contents of the files the regions map, as the run left them (named by the first state).
int NoteFiles(const rpma_sim_crash_state* state, void* arg) {
  auto& files = *static_cast<std::map<std::string, std::string>*>(arg);
  for (size_t i = 0; i < state->regions; ++i)
    if (*state->region[i].file != '\0')
      files[state->region[i].file] = ReadFile(state->region[i].file);
  return 1;  // one state is enough
}

// The recorded run: the server (and the client); false, having said why, if it did not
// end as it must.
bool RecordRun(const Options& options, const std::string& journal) {
  const int64_t timeout_ms = options.timeout_s * 1000LL;
  Child server, client;
  if (!Start(options.server, {{"RPMA_SIM_CRASH_JOURNAL", journal}}, &server)) {
    perror("rpma-sim-crash: cannot start the server");
    Kill(&server);
    return false;
  }
  if (!options.client.empty()) {
    regex_t ready;
    regcomp(&ready, options.ready.c_str(), REG_EXTENDED | REG_NOSUB);  // checked as parsed
    const bool listening =
        Pump({&server}, NowMs() + timeout_ms,
             [&] {
               return server.ended || regexec(&ready, server.output.c_str(), 0, nullptr, 0) == 0;
             }) &&
        !server.ended;
    regfree(&ready);
    if (!listening) {
      fprintf(stderr, "rpma-sim-crash: the server's output never matched '%s':\n%s",
              options.ready.c_str(), server.output.c_str());
      Kill(&server);
      return false;
    }
    if (!Start(options.client, {}, &client)) {
      perror("rpma-sim-crash: cannot start the client");
      Kill(&client);
      Kill(&server);
      return false;
    }
    if (!Pump({&server, &client}, NowMs() + timeout_ms, [&] { return Ended(client); }))
      Kill(&client);
    if (!EndedWell(client))
      fprintf(stderr, "rpma-sim-crash: the client did not end well (explored all the same):\n%s",
              client.output.c_str());
  }
  if (!Pump({&server}, NowMs() + timeout_ms, [&] { return Ended(server); })) {
    Kill(&server);
    fprintf(stderr,
            "rpma-sim-crash: the server did not exit by itself: its journal is written "
            "when it exits\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = Parse(argc, argv);
  const char* tmp = getenv("TMPDIR");
  std::string workdir = std::string(tmp != nullptr ? tmp : "/tmp") + "/rpma-sim-crash.XXXXXX";
  if (mkdtemp(&workdir[0]) == nullptr) {
    perror("rpma-sim-crash: mkdtemp");
    return 2;
  }
  const std::string journal = workdir + "/journal";
  if (!RecordRun(options, journal)) {
    RemoveDirectory(workdir);
    return 2;
  }
  // Each node's journal: those with crash points in a file-backed region are explored.
  rpma_sim_crash_options explore{options.torn > 0, options.torn > 0, options.torn, options.seed,
                                 options.max_states};
  uint64_t failed = 0, states = 0, explored_nodes = 0;
  int result = 0;
  for (int node = 1; access((journal + "." + std::to_string(node)).c_str(), R_OK) == 0; ++node) {
    const std::string path = journal + "." + std::to_string(node);
    Exploration run{&options, workdir, {}, 0, {}, {}};
    rpma_sim_crash_summary summary{};
    if (rpma_sim_crash_explore(path.c_str(), nullptr, NoteFiles, &run.files, &summary) != 0) {
      // Logged by the library; a node that cannot be explored is no pass for the others.
      fflush(stdout);
      fprintf(stderr, "rpma-sim-crash: %s cannot be explored\n", path.c_str());
      result = 2;
      continue;
    }
    if (summary.points == 0) continue;
    printf("node %d: %llu crash points\n", node, static_cast<unsigned long long>(summary.points));
    rpma_sim_crash_lint(path.c_str(), PrintFinding, nullptr);
    if (run.files.empty()) {
      printf("node %d: no region maps a file: no state to check\n", node);
      continue;
    }
    ++explored_nodes;
    printf(kRow, "point", "loss", "result", "what reverted", "operation at the point");
    if (rpma_sim_crash_explore(path.c_str(), &explore, CheckState, &run, &summary) != 0) {
      result = 2;
      break;
    }
    if (!run.cannot_check.empty()) {
      fflush(stdout);
      fprintf(stderr, "rpma-sim-crash: %s\n", run.cannot_check.c_str());
      result = 2;
      break;
    }
    printf("node %d: %llu states checked, %llu duplicates skipped, %llu failed\n", node,
           static_cast<unsigned long long>(summary.states),
           static_cast<unsigned long long>(summary.duplicates),
           static_cast<unsigned long long>(run.failed));
    for (const std::string& replay : run.replays) printf("replay %s\n", replay.c_str());
    failed += run.failed;
    states += summary.states;
    if (summary.truncated) {
      fflush(stdout);
      fprintf(stderr,
              "rpma-sim-crash: node %d's recording was cut short at the journal's limit "
              "(256 MiB, a region counted whole): the run's later points were not explored\n",
              node);
      result = 2;
    }
  }
  RemoveDirectory(workdir);
  if (result != 0) return result;
  if (explored_nodes == 0) {
    fflush(stdout);
    fprintf(stderr, "rpma-sim-crash: no node recorded crash points in a file-backed region\n");
    return 2;
  }
  printf("%llu states, %llu failed\n", static_cast<unsigned long long>(states),
         static_cast<unsigned long long>(failed));
  return failed > 0 ? 1 : 0;
}
