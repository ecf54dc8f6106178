// crash_journal.h -- one node's crash points, recorded from one run: every event that can
// change what a power failure leaves in the node's persistent memory, in the order the node
// executed them, and the contents of its regions once the run was over.
//
// A crash point is a remote placement (a write, a write with immediate data, an atomic
// write, a send into a receive buffer), with the bytes it overwrote, or a durable event (a
// completed flush, an rpma_sim_persist), with the ranges it made durable. Points are numbered
// from 1 by the node (PersistenceDomain::points) since its creation, so that a power-failure
// rule `point=K` finds the same one in an ordinary run of the same program. From the final
// contents and the overwritten bytes every earlier image can be rebuilt
// (crash_explorer.h): one recorded run, not one run per point.
//
// A journal is written to a file (version 1, little-endian, defined in crash_journal.cc)
// that rpma-sim-crash and the testing kit read back. It holds at most kMaxBytes of
// recorded bytes: past that, recording stops there (truncated) and the final contents are
// those of that moment.
#ifndef RPMA_SIM_PMEM_CRASH_JOURNAL_H_
#define RPMA_SIM_PMEM_CRASH_JOURNAL_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "sim/pmem/placed_ranges.h"

namespace rpma_sim {

// What a crash point did.
enum class CrashEventKind : uint8_t {
  kPlacement,  // remote bytes placed (Placement::by says how)
  kFlush,      // a completed flush (persistent or visibility)
  kPersist,    // the target's CPU made bytes durable (rpma_sim_persist)
};

// Which side of its connection a node was when a request made a crash point.
enum class CrashSide : uint8_t { kUnknown, kClient, kServer };

// A range of one region, by its key.
struct CrashSpan {
  uint32_t key = 0;
  uint64_t begin = 0;
  uint64_t end = 0;
};

// The durable value of bytes still placed (not durable themselves): a flush of flush scope
// qp drained a connection's write that another connection wrote over since
// (superseded_values.h).
struct CrashValue {
  uint32_t key = 0;
  uint64_t begin = 0;  // in the region
  std::vector<uint8_t> bytes;
};

struct CrashEvent {
  uint64_t point = 0;  // the node's crash point number (1-based)
  CrashEventKind kind = CrashEventKind::kPlacement;
  // Placements: who placed it and how. Flushes: the connection (placer) and persistent.
  Placement placement;
  bool persistent = false;  // flushes
  // The side of the connection whose request made the point, where it executed (a replay's
  // rule names it, so that it fires on this node and not on its peer in the same process):
  // kUnknown for a persist, which no connection makes.
  CrashSide side = CrashSide::kUnknown;
  // The range it names: what a placement wrote, what a flush or persist asked for.
  CrashSpan range;
  // Placements: the bytes of `range` before it (what a power failure right after reverts
  // them to, if they were durable).
  std::vector<uint8_t> overwritten;
  // Durable events: the ranges this event made durable (the model decided: eADR, a flush of
  // the connection's scope, DRAM where nothing is).
  std::vector<CrashSpan> made_durable;
  // Durable events: older values that became the durable value of bytes still placed.
  std::vector<CrashValue> durable_values;

  // "write of 64 bytes at offset 128 of region 0x1001 by work request 3 of queue pair 7",
  // "persistent flush of 64 bytes at offset 128 of region 0x1001 (...)".
  std::string Describe() const;
};

// A registered region as the journal knows it.
struct CrashRegion {
  uint32_t key = 0;
  uint32_t ordinal = 0;  // among the node's registrations (a power failure's `keep` names it)
  uint64_t address = 0;  // where it was mapped in the recording process (torn units align to it)
  uint64_t length = 0;
  std::string file;                  // a file mapping's path, or "" (anonymous memory)
  uint64_t file_offset = 0;          // of the region's first byte in the file
  std::vector<uint8_t> final_image;  // its contents when the recording ended
};

struct CrashJournal {
  static constexpr uint64_t kMaxBytes = 256ull << 20;

  uint64_t node = 0;  // the node's id (Node::id)
  // The device model (DeviceCaps): what made bytes durable, for the explorer's wording and
  // the lint; torn states exist only where something can survive (persistent memory).
  bool persistent_memory = true;
  bool eadr = false;
  bool flush_scope_qp = false;
  uint64_t first_point = 1;  // the first point recorded (points before it were not)
  bool truncated = false;    // ended early (kMaxBytes, a power failure): `end_reason` says why
  std::string end_reason;
  std::vector<CrashRegion> regions;
  std::vector<CrashEvent> events;

  // The region with `key`, or null.
  const CrashRegion* Region(uint32_t key) const;

  // Writes the journal to `path` (replaced); false with *error if it cannot.
  bool WriteTo(const std::string& path, std::string* error) const;
  // Reads one; false with *error if the file is not a journal this version can read.
  static bool ReadFrom(const std::string& path, CrashJournal* journal, std::string* error);
};

// "write", "write with imm", "atomic write", "send", "send with imm".
const char* PlacedByName(PlacedBy by);

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_CRASH_JOURNAL_H_
