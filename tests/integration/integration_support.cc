// integration_support.cc -- see integration_support.h.
#include "tests/integration/integration_support.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <fstream>

namespace integration {

namespace {

// How many connection segments the maps file at `path` shows (only those whose name still
// exists, if `named_only`: a removed one ends in " (deleted)"); -1 if it cannot be read.
int SegmentMappings(const std::string& path, bool named_only) {
  std::ifstream maps(path);
  if (!maps) return -1;  // no such process (or not ours to read)
  const std::string deleted = " (deleted)";
  std::string line;
  int count = 0;
  while (std::getline(maps, line)) {
    bool removed = line.size() >= deleted.size() &&
                   line.compare(line.size() - deleted.size(), deleted.size(), deleted) == 0;
    if (line.find("/dev/shm/rpma-sim-") != std::string::npos && !(named_only && removed)) ++count;
  }
  return count;
}

}  // namespace

bool MapsSharedMemorySegment() { return SegmentMappings("/proc/self/maps", false) > 0; }

int NamedSegmentsMappedBy(int pid) {
  return SegmentMappings("/proc/" + std::to_string(pid) + "/maps", true);
}

bool SharedMemoryExpected() {
  const char* transport = getenv("RPMA_SIM_TRANSPORT");
  return transport == nullptr || *transport == '\0' || strcmp(transport, "auto") == 0 ||
         strcmp(transport, "shm") == 0;
}

int OpenSockets() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int sockets = 0;
  while (dirent* entry = readdir(dir)) {
    char target[64] = {};
    std::string link = std::string("/proc/self/fd/") + entry->d_name;
    if (readlink(link.c_str(), target, sizeof(target) - 1) > 0 &&
        strncmp(target, "socket:", 7) == 0)
      ++sockets;
  }
  closedir(dir);
  return sockets;
}

long long NowMs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

std::string FreeTcpPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in sin;
  memset(&sin, 0, sizeof(sin));
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sin);
  std::string port;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len) == 0)
    port = std::to_string(ntohs(sin.sin_port));
  close(fd);
  return port;
}

int ListenOnFreePort(rpma_peer* peer, rpma_ep** ep, std::string* port) {
  int ret = RPMA_E_PROVIDER;
  for (int attempt = 0; attempt < 5; ++attempt) {
    *port = FreeTcpPort();
    ret = rpma_ep_listen(peer, kLoopback, port->c_str(), ep);
    if (ret == 0) break;
  }
  return ret;
}

int GetDescriptor(const rpma_mr_local* mr, std::vector<uint8_t>* desc) {
  size_t size = 0;
  int ret = rpma_mr_get_descriptor_size(mr, &size);
  if (ret) return ret;
  desc->resize(size);
  return rpma_mr_get_descriptor(mr, desc->data());
}

rpma_ep* ChildListen(int pipe_fd, rpma_peer* peer) {
  rpma_ep* ep = nullptr;
  std::string port;
  int ret = ListenOnFreePort(peer, &ep, &port);
  if (ret) ChildFail(pipe_fd, "rpma_ep_listen", ret);
  std::string line = "PORT " + port + "\n";
  if (!WriteAll(pipe_fd, line.data(), line.size())) _exit(5);
  return ep;
}

void ChildFail(int pipe_fd, const char* what, int ret) {
  std::string line = std::string("ERROR ") + what + ": " + rpma_err_2str(ret) + "\n";
  WriteAll(pipe_fd, line.data(), line.size());
  fprintf(stderr, "child: %s", line.c_str());
  _exit(3);
}

bool WaitReadable(int fd, int timeout_ms) {
  long long deadline = NowMs() + timeout_ms;
  for (;;) {
    long long left = deadline - NowMs();
    if (left < 0) left = 0;
    pollfd p = {fd, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left));
    if (n > 0) return (p.revents & (POLLIN | POLLHUP)) != 0;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadLine(int fd, int timeout_ms, std::string* line) {
  long long deadline = NowMs() + timeout_ms;
  line->clear();
  for (;;) {
    long long left = deadline - NowMs();
    if (left <= 0 || !WaitReadable(fd, static_cast<int>(left))) return false;
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    if (c == '\n') return true;
    line->push_back(c);
  }
}

int NextEvent(rpma_conn* conn, int timeout_ms, rpma_conn_event* event) {
  int fd = -1;
  int ret = rpma_conn_get_event_fd(conn, &fd);
  if (ret) return ret;
  if (!WaitReadable(fd, timeout_ms)) return RPMA_E_NO_EVENT;
  return rpma_conn_next_event(conn, event);
}

int NextCompletion(rpma_cq* cq, int timeout_ms, ibv_wc* wc) {
  int fd = -1;
  int ret = rpma_cq_get_fd(cq, &fd);
  if (ret) return ret;
  long long deadline = NowMs() + timeout_ms;
  for (;;) {
    memset(wc, 0, sizeof(*wc));
    ret = rpma_cq_get_wc(cq, 1, wc, nullptr);
    if (ret != RPMA_E_NO_COMPLETION) return ret;
    long long left = deadline - NowMs();
    if (left <= 0) return RPMA_E_NO_COMPLETION;
    // After rpma_cq_wait re-arms the CQ, every completion not yet taken is either in the CQ
    // (taken above) or raises a new event on the fd: no completion is missed.
    if (!WaitReadable(fd, static_cast<int>(left))) continue;
    ret = rpma_cq_wait(cq);
    if (ret && ret != RPMA_E_NO_COMPLETION) return ret;
  }
}

GuardedRegion::~GuardedRegion() {
  if (mapping_ != nullptr) munmap(mapping_, mapped_);
}

bool GuardedRegion::Map(size_t size, uint8_t fill) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (mapping_ != nullptr || size == 0 || size % page != 0) return false;
  void* mapping = mmap(nullptr, size + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED) return false;
  mapping_ = static_cast<uint8_t*>(mapping);
  mapped_ = size + 2 * page;
  region_ = mapping_ + page;
  if (mprotect(region_, size, PROT_READ | PROT_WRITE) != 0) return false;
  memset(region_, fill, size);
  return true;
}

}  // namespace integration
