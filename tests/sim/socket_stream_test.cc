// Tests of SocketStream: what a fork child keeps of a connection under way; a stream the
// engine stopped watching (Unwatch) is watched again by its next wait, bytes that arrived
// meanwhile included, and still closes its socket; a wait for room outlasts Unwatch.
#include "sim/transport/socket_stream.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "sim/common/fork_generation.h"
#include "sim/fabric/io_service.h"

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

// A stream connected to a plain socket of the test (*peer), accepted on *listener.
void ConnectedPair(std::unique_ptr<SocketStream>* stream, int* peer, int* listener) {
  sockaddr_in address;
  *listener = BoundToLoopback(&address);
  ASSERT_GE(*listener, 0);
  ASSERT_EQ(listen(*listener, 1), 0);
  std::string no_reactor;
  ASSERT_TRUE(EnsureReactor(&no_reactor)) << no_reactor;
  SocketStream::ConnectFailure failure;
  ASSERT_EQ(SocketStream::Connect(AddressOf(address), 5000, &failure, stream), Status::kOk);
  *peer = accept(*listener, nullptr, nullptr);
  ASSERT_GE(*peer, 0);
}

// Runs `task` on the progress engine and waits for it (the safety net: 30 s; the task and
// its promise belong to the engine's call, so a late one touches nothing of the caller's).
bool OnEngine(std::function<void()> task) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  RunSoon([task = std::move(task), done] {
    task();
    done->set_value();
  });
  return finished.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
}

// While an application reads a connection itself, the engine stops watching its socket, so
// that the bytes arriving do not wake it for nothing (the socket is edge-triggered in the
// reactor). What arrives meanwhile is not lost to the engine: its next wait watches the
// socket again and finds those bytes at once. And a stream destroyed unwatched closes it.
TEST(SocketStreamTest, AnUnwatchedStreamIsWatchedAgainByItsNextWait) {
  std::unique_ptr<SocketStream> stream;
  int peer = -1, listener = -1;
  ASSERT_NO_FATAL_FAILURE(ConnectedPair(&stream, &peer, &listener));

  ASSERT_TRUE(OnEngine([&stream] { stream->Unwatch(); }));
  ASSERT_EQ(3, write(peer, "abc", 3));  // arrives while nothing watches the socket
  std::promise<void> readable;
  std::future<void> woke = readable.get_future();
  ASSERT_TRUE(OnEngine(
      [&stream, &readable] { stream->AsyncWaitReadable([&readable] { readable.set_value(); }); }));
  ASSERT_EQ(std::future_status::ready, woke.wait_for(std::chrono::seconds(30)))
      << "the wait after Unwatch never saw the bytes that had arrived";
  uint8_t bytes[8];
  EXPECT_EQ(3, stream->TryRead(bytes, sizeof(bytes)));
  // Watched, the next wait waits for bytes (a socket the reactor did not hold would end
  // every wait at once, with an error).
  std::promise<void> readable_again;
  std::future<void> woke_again = readable_again.get_future();
  ASSERT_TRUE(OnEngine([&stream, &readable_again] {
    stream->AsyncWaitReadable([&readable_again] { readable_again.set_value(); });
  }));
  EXPECT_EQ(std::future_status::timeout, woke_again.wait_for(std::chrono::milliseconds(100)))
      << "a wait with nothing to read ended";
  ASSERT_EQ(1, write(peer, "d", 1));
  ASSERT_EQ(std::future_status::ready, woke_again.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(1, stream->TryRead(bytes, sizeof(bytes)));

  // Unwatched again, then destroyed (on the engine, where its waits run): the peer sees the
  // connection end.
  ASSERT_TRUE(OnEngine([&stream] {
    stream->Unwatch();
    stream.reset();
  }));
  timeval timeout{30, 0};
  ASSERT_EQ(0, setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)));
  EXPECT_EQ(0, read(peer, bytes, sizeof(bytes))) << "the socket stayed open";
  close(peer);
  close(listener);
}

// A wait for room under way is not cancelled by Unwatch (it would begin again at once and
// watch the socket again): it ends when the peer has read and there is room.
TEST(SocketStreamTest, UnwatchLeavesAWaitForRoom) {
  std::unique_ptr<SocketStream> stream;
  int peer = -1, listener = -1;
  ASSERT_NO_FATAL_FAILURE(ConnectedPair(&stream, &peer, &listener));
  std::vector<uint8_t> chunk(64 << 10, 0x11);
  const iovec part{chunk.data(), chunk.size()};
  while (stream->Write(&part, 1) > 0) {
  }  // full: the peer reads nothing yet

  std::promise<void> room;
  std::future<void> woke = room.get_future();
  ASSERT_TRUE(OnEngine([&stream, &room] {
    stream->AsyncWaitWritable([&room] { room.set_value(); });
    stream->Unwatch();
  }));
  EXPECT_EQ(std::future_status::timeout, woke.wait_for(std::chrono::milliseconds(100)))
      << "Unwatch ended the wait for room";
  timeval timeout{1, 0};
  ASSERT_EQ(0, setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)));
  while (woke.wait_for(std::chrono::seconds(0)) != std::future_status::ready &&
         read(peer, chunk.data(), chunk.size()) > 0) {
  }
  ASSERT_EQ(std::future_status::ready, woke.wait_for(std::chrono::seconds(30)));
  ASSERT_TRUE(OnEngine([&stream] { stream.reset(); }));
  close(peer);
  close(listener);
}

}  // namespace
}  // namespace rpma_sim
