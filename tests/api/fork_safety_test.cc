// fork_safety_test.cc -- what a process started from a simulator process keeps of it:
// - a program started by a path that runs no pthread_atfork handler (posix_spawn, which
//   glibc's system() and popen() use) gets no fd of the simulator's: every fd it opens is
//   close-on-exec, as every fd of real librpma, libibverbs and librdmacm is (O_CLOEXEC);
// - a fork() child holds none of its parent's sockets, even when another thread of the
//   parent connects or deletes a connection as it forks;
// - a fork() child has a registered region at its address, with its bytes and protection,
//   unless the application marked it MADV_DONTFORK.
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/test_support.h"

extern char** environ;

namespace {

constexpr size_t kPage = 4096;
constexpr int kRemoteUsage = RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC;

std::set<int> OpenFds() {
  std::set<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    int fd = atoi(entry->d_name);
    if (fd != own) fds.insert(fd);
  }
  closedir(dir);
  return fds;
}

std::string FdTarget(const std::string& proc_fd_dir, int fd) {
  char target[256] = {};
  std::string link = proc_fd_dir + "/" + std::to_string(fd);
  if (readlink(link.c_str(), target, sizeof(target) - 1) < 0) return "?";
  return target;
}

// The sockets /proc/<pid>/fd lists.
std::vector<std::string> SocketsOf(pid_t pid) {
  std::vector<std::string> sockets;
  const std::string dir_name = "/proc/" + std::to_string(pid) + "/fd";
  DIR* dir = opendir(dir_name.c_str());
  if (dir == nullptr) return sockets;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::string target = FdTarget(dir_name, atoi(entry->d_name));
    if (target.compare(0, 7, "socket:") == 0)
      sockets.push_back(std::string("fd ") + entry->d_name + " -> " + target);
  }
  closedir(dir);
  return sockets;
}

// Starts `sleep 30` with posix_spawn (no fork handlers run, as for system() and popen()).
pid_t SpawnSleeper() {
  const char* argv[] = {"sleep", "30", nullptr};
  pid_t pid = -1;
  if (posix_spawnp(&pid, "sleep", nullptr, nullptr, const_cast<char* const*>(argv), environ) != 0)
    return -1;
  return pid;
}

// Every fd the simulator opened for a listening endpoint, a connection on each side (with
// the fds librpma hands out) and a registered region must be close-on-exec, as every fd
// of real librpma/libibverbs/librdmacm is (O_CLOEXEC): otherwise it leaks into any program
// the application executes.
TEST(ForkSafetyTest, EveryFdTheSimulatorOpensIsCloseOnExec) {
  const std::set<int> before = OpenFds();
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Connect());
  int fd = -1;
  ASSERT_EQ(0, rpma_ep_get_fd(pair.ep, &fd));
  for (rpma_conn* conn : {pair.client, pair.server}) {
    ASSERT_EQ(0, rpma_conn_get_event_fd(conn, &fd));
    ASSERT_EQ(0, rpma_cq_get_fd(MainCq(conn), &fd));
  }
  void* region =
      mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(MAP_FAILED, region);
  rpma_mr_local* mr = nullptr;
  ASSERT_EQ(0, rpma_mr_reg(pair.peer, region, 2 * kPage, kRemoteUsage, &mr));

  std::vector<std::string> leaking;
  for (int open_fd : OpenFds()) {
    if (before.count(open_fd) != 0) continue;
    const int flags = fcntl(open_fd, F_GETFD);
    if (flags >= 0 && (flags & FD_CLOEXEC) == 0)
      leaking.push_back("fd " + std::to_string(open_fd) + " -> " +
                        FdTarget("/proc/self/fd", open_fd));
  }
  std::string list;
  for (const std::string& entry : leaking) list += "\n  " + entry;
  EXPECT_TRUE(leaking.empty()) << "fds without FD_CLOEXEC:" << list;

  EXPECT_EQ(0, rpma_mr_dereg(&mr));
  munmap(region, 2 * kPage);
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
}

// Whether process `pid` runs the program named `name` now (/proc/<pid>/comm): it has exec'd.
bool Runs(pid_t pid, const std::string& name) {
  FILE* file = fopen(("/proc/" + std::to_string(pid) + "/comm").c_str(), "re");
  if (file == nullptr) return false;
  char comm[64] = {};
  const bool read = fgets(comm, sizeof(comm), file) != nullptr;
  fclose(file);
  return read && std::string(comm) == name + "\n";
}

// A server that starts a helper program (`start`, which returns its pid) while it listens
// must not hand the helper its listening socket: after rpma_ep_shutdown the port is free
// again (docs/processes-and-fork.md), whatever the helper does.
void ExpectAHelperKeepsNoPort(const std::function<pid_t()>& start) {
  rpma_peer* peer = nullptr;
  ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer));
  const std::string port = FreeTcpPort();
  ASSERT_FALSE(port.empty());
  rpma_ep* ep = nullptr;
  ASSERT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), &ep));
  const pid_t helper = start();
  ASSERT_GT(helper, 0) << "the helper did not start";
  // Until it has exec'd (a background child of a shell may not have yet), with a safety net.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!Runs(helper, "sleep") && std::chrono::steady_clock::now() < deadline) sched_yield();
  std::string list;
  for (const std::string& entry : SocketsOf(helper)) list += "\n  " + entry;
  EXPECT_TRUE(list.empty()) << "the helper holds sockets of the simulator:" << list;
  ASSERT_EQ(0, rpma_ep_shutdown(&ep));
  rpma_ep* again = nullptr;
  EXPECT_EQ(0, rpma_ep_listen(peer, kLoopback, port.c_str(), &again))
      << "the port is not free after rpma_ep_shutdown while the helper lives";
  if (again != nullptr) EXPECT_EQ(0, rpma_ep_shutdown(&again));
  kill(helper, SIGKILL);
  waitpid(helper, nullptr, 0);  // a child of ours; the shell's is init's to reap (ECHILD)
  EXPECT_EQ(0, rpma_peer_delete(&peer));
}

// posix_spawn (as glibc's popen() uses) runs no fork handlers.
TEST(ForkSafetyTest, AProgramSpawnedWhileListeningDoesNotKeepThePort) {
  ExpectAHelperKeepsNoPort(SpawnSleeper);
}

// Neither does system(), which a server may use to start a helper in the background.
TEST(ForkSafetyTest, AHelperStartedWithSystemWhileListeningDoesNotKeepThePort) {
  const char* dir = getenv("TEST_TMPDIR");
  const std::string pid_file =
      std::string(dir != nullptr ? dir : "/tmp") + "/helper." + std::to_string(getpid());
  ExpectAHelperKeepsNoPort([&pid_file] {
    const std::string command = "sleep 30 </dev/null >/dev/null 2>&1 & echo $! > " + pid_file;
    pid_t helper = -1;
    if (system(command.c_str()) != 0) return helper;
    FILE* file = fopen(pid_file.c_str(), "re");
    if (file == nullptr) return helper;
    if (fscanf(file, "%d", &helper) != 1) helper = -1;
    fclose(file);
    unlink(pid_file.c_str());
    return helper;
  });
}

// How many sockets this process holds (/proc/self/fd).
int SocketCount() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    if (FdTarget("/proc/self/fd", atoi(entry->d_name)).compare(0, 7, "socket:") == 0) ++count;
  }
  closedir(dir);
  return count;
}

// For each socket this process holds: its domain and type, local and peer address (and
// whether it is listening).
std::string DescribeSockets() {
  std::string out;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return out;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const int fd = atoi(entry->d_name);
    std::string target = FdTarget("/proc/self/fd", fd);
    if (target.compare(0, 7, "socket:") != 0) continue;
    int domain = -1, type = -1, listening = -1;
    socklen_t length = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length);
    length = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length);
    length = sizeof(int);
    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length);
    auto name = [](const sockaddr_storage& address) {
      if (address.ss_family != AF_INET) return std::string("-");
      const sockaddr_in& in = reinterpret_cast<const sockaddr_in&>(address);
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &in.sin_addr, text, sizeof(text));
      return std::string(text) + ":" + std::to_string(ntohs(in.sin_port));
    };
    sockaddr_storage local{}, peer{};
    socklen_t local_length = sizeof(local), peer_length = sizeof(peer);
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_length);
    const bool connected = getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_length) == 0;
    // TCP states (include/net/tcp_states.h): 1 ESTABLISHED, 2 SYN_SENT, 4 FIN_WAIT1,
    // 5 FIN_WAIT2, 7 CLOSE, 8 CLOSE_WAIT, 10 LISTEN.
    tcp_info info{};
    socklen_t info_length = sizeof(info);
    const int state =
        getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &info_length) == 0 ? info.tcpi_state : -1;
    out += "\n  fd " + std::to_string(fd) + " " + target + " domain " + std::to_string(domain) +
           " type " + std::to_string(type) + (listening == 1 ? " LISTENING" : "") + " local " +
           name(local) + " peer " + (connected ? name(peer) : std::string("(none)")) +
           " tcp state " + std::to_string(state);
  }
  closedir(dir);
  return out;
}

// docs/processes-and-fork.md: "the simulator's sockets (listeners, connections) ... are
// closed there [in the child]". A fork() by one thread while another connects and deletes
// connections (a server forking workers while it serves) must leave the child none of them.
TEST(ForkSafetyTest, AForkWhileAnotherThreadChurnsConnectionsLeavesTheChildNoSocket) {
  if (getenv("RPMA_SIM_TRANSPORT") != nullptr)
    GTEST_SKIP() << "it connects over TCP itself: the target without a transport runs it";
  rpma_sim_transport initial = RPMA_SIM_TRANSPORT_AUTO;
  ASSERT_EQ(0, rpma_sim_get_transport(&initial));
  ASSERT_EQ(0, rpma_sim_set_transport(RPMA_SIM_TRANSPORT_TCP));
  ConnectedPair pair;
  ASSERT_NO_FATAL_FAILURE(pair.Listen());
  std::atomic<bool> stop{false};
  std::atomic<int> cycles{0};
  std::thread churn([&] {
    while (!stop.load() && !::testing::Test::HasFatalFailure()) {
      rpma_conn* client = nullptr;
      rpma_conn* server = nullptr;
      ConnectOnce(pair.peer, pair.ep, pair.port, PairOptions(), &client, &server);
      if (client != nullptr && server != nullptr) DisconnectAndDelete(&client, &server);
      CloseConnections(&client, &server);
      cycles.fetch_add(1);
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int forks = 0, leaky = 0, most = 0;
  std::string seen;
  while (std::chrono::steady_clock::now() < deadline && leaky < 3) {
    int said[2];
    if (pipe(said) != 0) break;
    pid_t child = fork();
    if (child == 0) {
      int sockets = SocketCount();
      if (sockets > 0) {
        std::string what = DescribeSockets();
        (void)!write(said[1], what.data(), what.size());
      }
      _exit(sockets < 0 ? 0 : (sockets > 100 ? 100 : sockets));
    }
    close(said[1]);
    char text[1024];
    ssize_t got = child > 0 ? read(said[0], text, sizeof(text) - 1) : 0;
    if (got > 0) {
      text[got] = '\0';
      seen += text;
    }
    close(said[0]);
    if (child < 0) break;
    ++forks;
    int status = 0;
    if (waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) > 0) {
      ++leaky;
      most = std::max(most, WEXITSTATUS(status));
    }
  }
  stop.store(true);
  churn.join();
  EXPECT_EQ(0, leaky) << leaky << " of " << forks << " fork children (" << cycles.load()
                      << " connections meanwhile) held sockets of their parent (up to " << most
                      << "):" << seen;
  ASSERT_NO_FATAL_FAILURE(pair.Teardown());
  EXPECT_EQ(0, rpma_sim_set_transport(initial));
}

// The registered region as it is before a fork of each kind: page-aligned anonymous memory,
// registered for remote access (over shared memory its pages move: docs/transports.md).
class RegionForkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(NewLocalPeer(&peer_));
    region_ = static_cast<uint8_t*>(
        mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(MAP_FAILED, static_cast<void*>(region_));
    memset(region_, 0x11, 2 * kPage);
    ASSERT_EQ(0, rpma_mr_reg(peer_, region_, 2 * kPage, kRemoteUsage, &mr_));
  }
  void TearDown() override {
    if (mr_ != nullptr) EXPECT_EQ(0, rpma_mr_dereg(&mr_));
    if (region_ != nullptr && static_cast<void*>(region_) != MAP_FAILED) munmap(region_, 2 * kPage);
    if (peer_ != nullptr) EXPECT_EQ(0, rpma_peer_delete(&peer_));
  }

  rpma_peer* peer_ = nullptr;
  uint8_t* region_ = nullptr;
  rpma_mr_local* mr_ = nullptr;
};

// After madvise(MADV_DONTFORK) on a registered region (what rdma-core's fork support does to
// registered memory, and a common idiom of RDMA applications) a fork() child has no mapping
// there (madvise(2)): the kernel does not copy it, and neither does the simulator.
TEST_F(RegionForkTest, MadvDontforkAfterRegistrationLeavesTheChildWithoutTheRegion) {
  ASSERT_EQ(0, madvise(region_, 2 * kPage, MADV_DONTFORK)) << strerror(errno);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // msync fails with ENOMEM where nothing is mapped.
    const bool mapped = msync(region_, 2 * kPage, MS_ASYNC) == 0;
    _exit(mapped ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(0, WEXITSTATUS(status)) << "the fork child has the MADV_DONTFORK region mapped";
  ASSERT_EQ(0, madvise(region_, 2 * kPage, MADV_DOFORK)) << strerror(errno);
}

// After mprotect(PROT_READ) on a registered region, a fork() child
// has the region at the same address, with the same bytes, read-only (a store there kills
// it with SIGSEGV), as the kernel leaves private memory.
TEST_F(RegionForkTest, AForkChildKeepsTheRegionsAddressContentsAndProtection) {
  ASSERT_EQ(0, mprotect(region_, 2 * kPage, PROT_READ));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (size_t i = 0; i < 2 * kPage; ++i)
      if (region_[i] != 0x11) _exit(1);
    signal(SIGSEGV, SIG_DFL);  // the kernel's fault itself, not a sanitizer's report of it
    region_[kPage] = 0x33;     // must fault
    _exit(2);
  }
  int status = 0;
  ASSERT_EQ(child, waitpid(child, &status, 0));
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
      << "status " << status << " (exit 1: other bytes; exit 2: the store did not fault)";
  ASSERT_EQ(0, mprotect(region_, 2 * kPage, PROT_READ | PROT_WRITE));
}

}  // namespace
