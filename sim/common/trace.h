// trace.h -- RPMA_SIM_TRACE: a Chrome trace-event JSON file of what the simulator does.
//
// With RPMA_SIM_TRACE=FILE set when the process starts, every event is appended to FILE as
// one line of the JSON array format ("[", then one event per line): work requests as
// slices, connection events, fault firings and power failures as instants. Perfetto and
// chrome://tracing open it. `%p` in FILE becomes the process id, so each process of a run
// writes its own file (a child forked while tracing reopens it under its own pid; without
// `%p` the child does not trace, as it would corrupt its parent's file). Each event is
// copied into a shared mapping of the file at an offset reserved with one atomic add (no
// system call on the path but a file extension once per MiB), so a process that crashes or
// is killed leaves every event it wrote: the file then lacks only the closing "]" (spaces
// follow the last event), which both viewers supply; a process that exits normally closes
// the array and cuts the file there. The file is bounded by RPMA_SIM_TRACE_MAX_MB (default
// 256): past it the trace stops with a last instant saying so.
//
// Off (the default), trace::On() is one relaxed load and nothing else runs.
#ifndef RPMA_SIM_COMMON_TRACE_H_
#define RPMA_SIM_COMMON_TRACE_H_

#include <stdint.h>

#include <atomic>
#include <string>

namespace rpma_sim {
namespace trace {

extern std::atomic<bool> g_on;

// Whether events are being written.
inline bool On() { return g_on.load(std::memory_order_relaxed); }

// Now, in nanoseconds of CLOCK_MONOTONIC: the same clock in every process of a host, so the
// files of a client and a server line up.
uint64_t NowNs();

// The track (a row in the viewer; a "thread" of the trace format) of process-wide events:
// fault firings that belong to no connection and power failures.
constexpr uint64_t kProcessTrack = 1;

// Names `track` (a "thread_name" metadata event, and a sort index of the track's number) the
// first time it is named or used; later names of the same track are ignored.
void NameTrack(uint64_t track, const std::string& name);
bool TrackNamed(uint64_t track);

// A slice from start_ns to end_ns on `track`. `args` is the inside of a JSON object
// ("\"len\":64,...", may be empty); `color` a trace-viewer color name or nullptr.
void Slice(uint64_t track, const char* category, const std::string& name, uint64_t start_ns,
           uint64_t end_ns, const std::string& args, const char* color = nullptr);

// An instant event now on `track`.
void Instant(uint64_t track, const char* category, const std::string& name,
             const std::string& args);

// The bound RPMA_SIM_TRACE_MAX_MB sets, in MiB (256 when unset); *understood is false if the
// variable is set to something that is not a number from 1 to 2^20 (the default then holds).
uint64_t MaxMegabytes(bool* understood);

// `text` as a JSON string literal, quotes included, in UTF-8: a byte that is not part of a
// well-formed UTF-8 sequence becomes U+FFFD.
std::string Quote(const std::string& text);

// Opens RPMA_SIM_TRACE's file, if it is set and not open yet. librpma calls it as it loads
// (api/), so that the file is there even if the process never reaches an event; a tool that
// links the simulator without the API (rpma-sim-info) never opens it.
void OpenAtLoad();

// Ends the array and closes the file, as at a normal exit (for a process about to _exit).
// Later events are dropped.
void Close();

}  // namespace trace
}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_TRACE_H_
