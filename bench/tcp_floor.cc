// tcp_floor.cc -- what TCP over loopback costs on this machine by itself, between two
// processes and with nothing of rpma-sim: the floor under rpma-sim's tcp rows in
// compare_ucx.sh. A 64 B ping-pong with both sides busy-polling (as ucx_perftest's put_lat)
// and with the responder asleep in epoll_wait (as a server whose application sleeps: its
// engine's thread answers a write), and a stream of 1 MiB messages as they are and with the
// two copies rpma-sim adds (into a frame at the sender, out of one at the receiver).
// Prints a Markdown table.
//
//   bazel run -c opt //bench:tcp_floor
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace {

constexpr size_t kMessage = 1 << 20;
constexpr int kStreamMessages = 2000;
constexpr int kPings = 20000;

enum Mode : char { kPingBusy = 'b', kPingAsleep = 'e', kStream = 's', kStreamCopies = 'c' };

// Takes exactly `size` bytes: spinning on a non-blocking recv when `busy`, else asleep in
// epoll_wait until the socket is readable. False at the end of the stream.
bool ReadAll(int fd, int epoll_fd, char* data, size_t size, bool busy) {
  while (size > 0) {
    ssize_t n = recv(fd, data, size, MSG_DONTWAIT);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return false;
    if (!busy) {
      epoll_event event;
      epoll_wait(epoll_fd, &event, 1, -1);
    }
  }
  return true;
}

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The responder: one connection per measurement, whose first byte says which.
void Serve(int listener) {
  std::vector<char> frame(kMessage), region(kMessage);
  for (;;) {
    int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    int epoll_fd = epoll_create1(0);
    epoll_event event{};
    event.events = EPOLLIN;
    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
    char mode;
    if (!ReadAll(fd, epoll_fd, &mode, 1, false)) return;
    if (mode == kPingBusy || mode == kPingAsleep) {
      char ping[64];
      while (ReadAll(fd, epoll_fd, ping, sizeof(ping), mode == kPingBusy))
        WriteAll(fd, ping, sizeof(ping));
    } else {
      for (int i = 0; i < kStreamMessages; ++i) {
        if (!ReadAll(fd, epoll_fd, frame.data(), kMessage, false)) break;
        if (mode == kStreamCopies) memcpy(region.data(), frame.data(), kMessage);
      }
      WriteAll(fd, "k", 1);
    }
    close(epoll_fd);
    close(fd);
  }
}

int Connect(uint16_t port, Mode mode) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return -1;
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  char byte = mode;
  WriteAll(fd, &byte, 1);
  return fd;
}

// The median round trip of a 64 B ping-pong, in microseconds; the client busy-polls.
double PingPong(uint16_t port, Mode mode) {
  int fd = Connect(port, mode);
  char ping[64] = {};
  std::vector<double> trips;
  for (int i = 0; i < kPings; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!WriteAll(fd, ping, sizeof(ping)) || !ReadAll(fd, -1, ping, sizeof(ping), true)) break;
    trips.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count());
  }
  close(fd);
  if (trips.empty()) return 0;
  std::nth_element(trips.begin(), trips.begin() + trips.size() / 2, trips.end());
  return trips[trips.size() / 2];
}

// MiB/s of a stream of 1 MiB messages, until the receiver says it has them all.
double Stream(uint16_t port, Mode mode) {
  int fd = Connect(port, mode);
  std::vector<char> source(kMessage, 'x'), frame(kMessage);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kStreamMessages; ++i) {
    const char* out = source.data();
    if (mode == kStreamCopies) {
      memcpy(frame.data(), source.data(), kMessage);
      out = frame.data();
    }
    if (!WriteAll(fd, out, kMessage)) break;
  }
  char ack;
  bool done = ReadAll(fd, -1, &ack, 1, true);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(fd);
  return done ? kStreamMessages / seconds : 0;
}

}  // namespace

int main() {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 4) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return 1;
  uint16_t port = ntohs(address.sin_port);
  pid_t child = fork();
  if (child == 0) {
    Serve(listener);
    _exit(0);
  }
  close(listener);
  printf("| TCP over loopback, two processes | size | result |\n|---|---|---|\n");
  printf("| ping-pong round trip, both busy-polling (median us) | 64 B | %.2f |\n",
         PingPong(port, kPingBusy));
  printf("| ping-pong round trip, responder asleep in epoll_wait (median us) | 64 B | %.2f |\n",
         PingPong(port, kPingAsleep));
  printf("| stream (MiB/s) | 1 MiB | %.1f |\n", Stream(port, kStream));
  printf("| stream with a copy into a frame and one out of it (MiB/s) | 1 MiB | %.1f |\n",
         Stream(port, kStreamCopies));
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);
  return 0;
}
