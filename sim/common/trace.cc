// trace.cc -- the RPMA_SIM_TRACE file: opened when the library loads, each event copied into
// its shared mapping, reopened by a forked child, closed at exit (atexit).
#include "sim/common/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "sim/common/thread_annotations.h"

namespace rpma_sim {
namespace trace {

std::atomic<bool> g_on{false};

namespace {

constexpr uint64_t kDefaultMaxMb = 256;
// Room kept past the bound for the line that says the trace stopped and the closing one.
constexpr uint64_t kReserve = 512;
// The file grows by this much at a time, filled with spaces (JSON whitespace) until written.
constexpr uint64_t kChunk = 1 << 20;

// A lock of a few instructions (the set of named tracks); a forked child can reset it.
class CAPABILITY("spin lock") SpinLock {
 public:
  void Lock() ACQUIRE() {
    while (flag_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  void Unlock() RELEASE() { flag_.clear(std::memory_order_release); }
  // In a fork child, which has only the thread that forked.
  void Reset() { flag_.clear(); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

// The file is mapped shared and each event copied into it at an offset reserved with one
// atomic add: no system call on the event path (a thread may hold a queue pair's lock
// there), and what is copied is in the page cache, so it reaches the file even if the
// process is killed the next instant. Once per kChunk the thread that crosses into a new
// chunk extends the file first (ftruncate); others that need the chunk wait for it.
class TraceFile {
 public:
  TraceFile() {
    const char* pattern = getenv("RPMA_SIM_TRACE");
    if (pattern == nullptr || *pattern == '\0') return;
    pattern_ = pattern;
    max_bytes_ = MaxBytesFromEnvironment();
    pthread_atfork(nullptr, nullptr, [] { Get().AfterForkInChild(); });
    atexit([] { Get().Close(); });
    Open();
  }

  static TraceFile& Get();

  int pid() const { return pid_; }

  // Appends `line` unless tracing is off or the bound is reached.
  void Write(const std::string& line) {
    writers_.fetch_add(1);
    if (On()) {
      uint64_t at = bytes_.fetch_add(line.size());
      if (at + line.size() + kReserve <= max_bytes_) {
        CopyAt(at, line);
      } else if (g_on.exchange(false)) {
        std::string stopped = StoppedLine();
        CopyAt(max_bytes_ - kReserve, stopped);  // the writes past the bound were dropped
        bytes_.store(max_bytes_ - kReserve + stopped.size());
      }
    }
    writers_.fetch_sub(1);
  }

  // Stops tracing, waits for the writes under way, ends the array and cuts the file to it.
  // Once: a second call (a power failure's exit on the engine thread while the application
  // exits, atexit after trace::Close) waits for the first to finish.
  void Close() {
    if (close_started_.exchange(true)) {
      while (!closed_.load()) std::this_thread::yield();
      return;
    }
    g_on.store(false);
    while (writers_.load() != 0) std::this_thread::yield();
    if (map_ == nullptr) return closed_.store(true);
    uint64_t end = std::min(bytes_.load(), max_bytes_ - kReserve + kReserve / 2);
    std::string last =
        EventLine("{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"trace\",\"name\":\"end of trace\"",
                  kProcessTrack, NowNs(), "", LineEnd::kLast) +
        "]\n";
    CopyAt(end, last);
    if (ftruncate(fd_, end + last.size()) != 0) {
      // The file keeps its spaces after the array: still valid JSON.
    }
    Unmap();
    closed_.store(true);
  }

  bool MarkNamed(uint64_t track) {
    named_lock_.Lock();
    const bool added = named_.insert(track).second;
    named_lock_.Unlock();
    return added;
  }
  bool Named(uint64_t track) {
    named_lock_.Lock();
    const bool named = named_.count(track) != 0;
    named_lock_.Unlock();
    return named;
  }

  // Whether an event line is followed by another (a comma) or is the array's last.
  enum class LineEnd { kMore, kLast };

  // One event as a line of the array: `head` is the event's opening up to its name.
  std::string EventLine(const std::string& head, uint64_t track, uint64_t ts_ns,
                        const std::string& more, LineEnd end = LineEnd::kMore) const {
    char where[96];
    snprintf(where, sizeof(where), ",\"pid\":%d,\"tid\":%" PRIu64 ",\"ts\":%" PRIu64 ".%03u", pid_,
             track, ts_ns / 1000, static_cast<unsigned>(ts_ns % 1000));
    return head + where + more + (end == LineEnd::kMore ? "},\n" : "}");
  }

 private:
  static uint64_t MaxBytesFromEnvironment() {
    bool understood;
    uint64_t mb = MaxMegabytes(&understood);
    if (!understood) {
      fprintf(stderr,
              "rpma-sim: RPMA_SIM_TRACE_MAX_MB=%s is not a number of MiB from 1 to %llu; "
              "the trace is bounded at %" PRIu64 " MiB\n",
              getenv("RPMA_SIM_TRACE_MAX_MB"), 1ull << 20, mb);
    }
    return mb << 20;
  }

  // The file name: the pattern with every %p replaced by the process id.
  std::string Path() const {
    std::string path;
    for (size_t i = 0; i < pattern_.size(); ++i) {
      if (pattern_[i] == '%' && i + 1 < pattern_.size() && pattern_[i + 1] == 'p') {
        path += std::to_string(pid_);
        ++i;
      } else {
        path += pattern_[i];
      }
    }
    return path;
  }

  // The file, locked for this process (flock): emptied once the lock is held. A file another
  // running process writes (the same FILE without %p) is not touched: this one writes
  // FILE.<pid>, and says so.
  static int OpenLocked(std::string* path, int pid) {
    int fd = open(path->c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
      close(fd);
      const std::string own = *path + "." + std::to_string(pid);
      fprintf(stderr,
              "rpma-sim: RPMA_SIM_TRACE: %s is another running process's trace; this "
              "one writes %s (put %%p in the name to give each process its own)\n",
              path->c_str(), own.c_str());
      *path = own;
      fd = open(path->c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        errno = EWOULDBLOCK;
        return -1;
      }
    }
    if (fd >= 0 && ftruncate(fd, 0) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }

  void Open() {
    pid_ = static_cast<int>(getpid());
    std::string path = Path();
    int fd = OpenLocked(&path, pid_);
    void* map = MAP_FAILED;
    if (fd >= 0) map = mmap(nullptr, max_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
      fprintf(stderr, "rpma-sim: RPMA_SIM_TRACE: cannot %s %s: %s; not tracing\n",
              fd < 0 ? "open" : "map", path.c_str(), strerror(errno));
      if (fd >= 0) close(fd);
      return;
    }
    fd_ = fd;
    map_ = static_cast<char*>(map);
    extended_.store(0);
    char comm[64] = "?";
    FILE* file = fopen("/proc/self/comm", "re");
    if (file != nullptr) {
      if (fgets(comm, sizeof(comm), file) != nullptr) comm[strcspn(comm, "\n")] = '\0';
      fclose(file);
    }
    std::string head = "[\n" + EventLine("{\"ph\":\"M\",\"name\":\"process_name\"", 0, 0,
                                         ",\"args\":{\"name\":" +
                                             Quote(std::string("rpma-sim ") + comm + " (pid " +
                                                   std::to_string(pid_) + ")") +
                                             "}");
    bytes_.store(head.size());
    CopyAt(0, head);
    g_on.store(true);
  }

  // Copies `line` to [at, at + size) of the file, extending the file first if it is shorter.
  void CopyAt(uint64_t at, const std::string& line) {
    uint64_t end = at + line.size();
    while (extended_.load(std::memory_order_acquire) < end) {
      if (extending_.test_and_set(std::memory_order_acquire)) {
        std::this_thread::yield();  // another thread is extending it
        continue;
      }
      uint64_t size = extended_.load();
      if (size < end) {
        uint64_t grown =
            std::min(std::max(size + kChunk, (end + kChunk - 1) / kChunk * kChunk), max_bytes_);
        if (ftruncate(fd_, grown) == 0) {
          memset(map_ + size, ' ', grown - size);
          extended_.store(grown, std::memory_order_release);
        } else {
          g_on.store(false);  // a full disk: the trace stops where it is
          extending_.clear(std::memory_order_release);
          return;
        }
      }
      extending_.clear(std::memory_order_release);
    }
    memcpy(map_ + at, line.data(), line.size());
  }

  void Unmap() {
    munmap(map_, max_bytes_);
    map_ = nullptr;
    close(fd_);
    fd_ = -1;
  }

  // A forked child has one thread and its parent's mapping: it writes a file of its own, or
  // nothing.
  void AfterForkInChild() {
    g_on.store(false);
    writers_.store(0);
    close_started_.store(false);  // the child's own file, if it opens one, is still to close
    closed_.store(false);
    named_lock_.Reset();
    extending_.clear();
    if (map_ == nullptr) return;
    Unmap();  // the parent's file stays as the parent writes it
    named_lock_.Lock();
    named_.clear();
    named_lock_.Unlock();
    if (pattern_.find("%p") != std::string::npos) Open();
  }

  std::string StoppedLine() const {
    return EventLine(
        "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"trace\",\"name\":\"trace stopped\"", kProcessTrack,
        NowNs(),
        ",\"args\":{\"reason\":" +
            Quote("RPMA_SIM_TRACE_MAX_MB reached (" + std::to_string(max_bytes_ >> 20) + " MiB)") +
            "}");
  }

  std::string pattern_;
  uint64_t max_bytes_ = kDefaultMaxMb << 20;
  int pid_ = 0;
  int fd_ = -1;
  char* map_ = nullptr;
  std::atomic<uint64_t> extended_{0};  // how long the file is
  std::atomic_flag extending_ = ATOMIC_FLAG_INIT;
  std::atomic<uint64_t> bytes_{0};  // how much of it is reserved for events
  std::atomic<int> writers_{0};
  std::atomic<bool> close_started_{false};
  std::atomic<bool> closed_{false};
  SpinLock named_lock_;
  std::unordered_set<uint64_t> named_ GUARDED_BY(named_lock_);
};

TraceFile& TraceFile::Get() {
  // Never destroyed: a thread of the progress engine may still trace during exit (Close,
  // registered with atexit, ends the file first; later events are dropped).
  static TraceFile* file = new TraceFile;
  return *file;
}

}  // namespace

void OpenAtLoad() { TraceFile::Get(); }

uint64_t MaxMegabytes(bool* understood) {
  *understood = true;
  const char* text = getenv("RPMA_SIM_TRACE_MAX_MB");
  if (text == nullptr || *text == '\0') return kDefaultMaxMb;
  char* end = nullptr;
  errno = 0;
  unsigned long long mb = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || mb == 0 || mb > (1ull << 20) || text[0] == '-') {
    *understood = false;
    return kDefaultMaxMb;
  }
  return mb;
}

uint64_t NowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

namespace {

// The length of the well-formed UTF-8 sequence of 2 to 4 bytes at text[at], or 0.
size_t Utf8SequenceAt(const std::string& text, size_t at) {
  const unsigned char lead = static_cast<unsigned char>(text[at]);
  size_t length;
  uint32_t code;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
    code = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    code = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    code = lead & 0x07;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    const unsigned char next = static_cast<unsigned char>(text[at + i]);
    if ((next & 0xc0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3f);
  }
  // No overlong form, no surrogate, nothing past U+10FFFF.
  const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < least[length] || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return 0;
  return length;
}

}  // namespace

std::string Quote(const std::string& text) {
  std::string quoted = "\"";
  for (size_t at = 0; at < text.size(); ++at) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += static_cast<char>(c);
    } else if (c < 0x20) {
      char escaped[8];
      snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      quoted += escaped;
    } else if (c < 0x80) {
      quoted += static_cast<char>(c);
    } else if (size_t length = Utf8SequenceAt(text, at)) {
      quoted.append(text, at, length);
      at += length - 1;
    } else {
      quoted += "\\ufffd";  // not UTF-8 (a name the kernel cut mid-character, say)
    }
  }
  return quoted + "\"";
}

void NameTrack(uint64_t track, const std::string& name) {
  TraceFile& file = TraceFile::Get();
  if (!On() || !file.MarkNamed(track)) return;
  std::string line = file.EventLine("{\"ph\":\"M\",\"name\":\"thread_name\"", track, 0,
                                    ",\"args\":{\"name\":" + Quote(name) + "}") +
                     file.EventLine("{\"ph\":\"M\",\"name\":\"thread_sort_index\"", track, 0,
                                    ",\"args\":{\"sort_index\":" + std::to_string(track) + "}");
  file.Write(line);
}

bool TrackNamed(uint64_t track) { return TraceFile::Get().Named(track); }

void Slice(uint64_t track, const char* category, const std::string& name, uint64_t start_ns,
           uint64_t end_ns, const std::string& args, const char* color) {
  if (!On()) return;
  if (end_ns < start_ns) end_ns = start_ns;
  uint64_t dur = end_ns - start_ns;
  char duration[48];
  snprintf(duration, sizeof(duration), ",\"dur\":%" PRIu64 ".%03u", dur / 1000,
           static_cast<unsigned>(dur % 1000));
  std::string more = duration;
  if (color != nullptr) more += std::string(",\"cname\":\"") + color + "\"";
  more += ",\"args\":{" + args + "}";
  TraceFile& file = TraceFile::Get();
  file.Write(file.EventLine(
      std::string("{\"ph\":\"X\",\"cat\":\"") + category + "\",\"name\":" + Quote(name), track,
      start_ns, more));
}

void Instant(uint64_t track, const char* category, const std::string& name,
             const std::string& args) {
  if (!On()) return;
  if (track == kProcessTrack && !TrackNamed(kProcessTrack))
    NameTrack(kProcessTrack, "process: faults, power failures");
  TraceFile& file = TraceFile::Get();
  file.Write(file.EventLine(
      std::string("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"") + category + "\",\"name\":" + Quote(name),
      track, NowNs(), ",\"args\":{" + args + "}"));
}

void Close() { TraceFile::Get().Close(); }

}  // namespace trace
}  // namespace rpma_sim
