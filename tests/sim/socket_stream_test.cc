// Tests of SocketStream's connect: what a fork child keeps of a connection under way.
#include "sim/transport/socket_stream.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "gtest/gtest.h"
#include "sim/common/fork_generation.h"

namespace rpma_sim {
namespace {

std::set<int> OpenSockets() {
  std::set<int> sockets;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return sockets;
  const int listing = dirfd(dir);
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    int fd = atoi(entry->d_name);
    struct stat st;
    if (fd != listing && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode)) sockets.insert(fd);
  }
  closedir(dir);
  return sockets;
}

// A TCP socket bound to a free loopback port: its fd, *address its address (-1 on failure).
int BoundToLoopback(sockaddr_in* address) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  *address = sockaddr_in{};
  address->sin_family = AF_INET;
  address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(*address);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(address), sizeof(*address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(address), &length) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

SocketAddress AddressOf(const sockaddr_in& address) {
  SocketAddress target;
  memcpy(&target.storage, &address, sizeof(address));
  target.length = sizeof(address);
  return target;
}

// A fork while another thread's connect waits for the handshake: the child closes the
// socket as the fork returns, as it does a connected one. Before, the socket was marked only
// once connected, and a child that outlived its parent kept the connection open: the peer
// never saw it end.
TEST(SocketStreamTest, AForkChildDoesNotKeepAConnectUnderWay) {
  // A listener whose accept queue is full drops the next SYN: the connect waits (the
  // kernel resends it after a second).
  sockaddr_in address;
  int listener = BoundToLoopback(&address);
  ASSERT_GE(listener, 0);
  ASSERT_EQ(listen(listener, 0), 0);
  int filler = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_EQ(connect(filler, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);

  const std::set<int> before = OpenSockets();
  const SocketAddress target = AddressOf(address);
  std::unique_ptr<SocketStream> stream;
  Status status = Status::kProvider;
  std::thread connecting([&] {
    SocketStream::ConnectFailure failure;
    status = SocketStream::Connect(target, 30000, &failure, &stream);
  });
  // The connect's socket, once it exists (the connect then waits for the listener).
  int connecting_fd = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (connecting_fd < 0 && std::chrono::steady_clock::now() < deadline) {
    for (int fd : OpenSockets())
      if (before.count(fd) == 0) connecting_fd = fd;
    if (connecting_fd < 0) std::this_thread::yield();
  }
  if (connecting_fd < 0) {
    ADD_FAILURE() << "the connect made no socket";
    connecting.join();  // it failed, then
    return;
  }
  // Marked right after it is made (the scan may have seen it in between), and long before
  // the connect can complete: the queue is full until this thread drains it, below.
  const auto marked_by = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!MarkedCloseOnFork(connecting_fd) && std::chrono::steady_clock::now() < marked_by)
    std::this_thread::yield();
  EXPECT_TRUE(MarkedCloseOnFork(connecting_fd)) << "not marked while its connect waits";

  pid_t child = fork();
  if (child == 0) {
    // The child's fork handler has run: the parent's connection is not open here.
    _exit(fcntl(connecting_fd, F_GETFD) < 0 && errno == EBADF ? 0 : 1);
  }
  EXPECT_GT(child, 0);
  int child_status = 0;
  EXPECT_EQ(waitpid(child, &child_status, 0), child);
  EXPECT_TRUE(WIFEXITED(child_status) && WEXITSTATUS(child_status) == 0)
      << "the fork child kept the socket of the connect under way";

  // The queue drained, the resent SYN is accepted and the connect completes.
  int first = accept(listener, nullptr, nullptr);
  connecting.join();
  EXPECT_EQ(status, Status::kOk);
  EXPECT_TRUE(stream != nullptr && MarkedCloseOnFork(connecting_fd));
  stream.reset();
  EXPECT_FALSE(MarkedCloseOnFork(connecting_fd)) << "closed, so unmarked";
  close(first);
  close(filler);
  close(listener);
}

// A connect that fails unmarks its socket before closing it: a later fd of that number,
// the application's, stays open in a fork child.
TEST(SocketStreamTest, AFailedConnectLeavesNoMark) {
  sockaddr_in address;
  int listener = BoundToLoopback(&address);
  ASSERT_GE(listener, 0);
  close(listener);  // nobody listens there now: refused

  const SocketAddress target = AddressOf(address);
  std::unique_ptr<SocketStream> stream;
  SocketStream::ConnectFailure failure;
  ASSERT_EQ(SocketStream::Connect(target, 1000, &failure, &stream), Status::kProvider);
  EXPECT_EQ(failure, SocketStream::ConnectFailure::kRefused);
  int reused = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  // the lowest free number
  ASSERT_GE(reused, 0);
  EXPECT_FALSE(MarkedCloseOnFork(reused));
  close(reused);
}

}  // namespace
}  // namespace rpma_sim
