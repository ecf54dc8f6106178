// crash_explorer.h -- every crash state of a recorded run: what a node's persistent memory
// holds if power fails just before each of its crash points (crash_journal.h).
//
// At crash point K the image is every durable byte, and of the bytes placed but not durable:
//   loss mode all: none (they revert to what they were when last durable);
//   torn modes (8-byte words, 64-byte lines, aligned as the CPU aligns them in the
//     recording process): each unit alone survives, then `samples` subsets drawn as a power
//     failure with loss=words or lines draws them from a seed (an atomic write is one word:
//     whole or not at all).
// The last state is a failure after the last point. A device where nothing survives (DRAM)
// has no torn states. States whose image equals one already given are skipped (counted).
//
// The images are rebuilt from the journal alone, from the regions' final contents back
// through what each placement overwrote: one recorded run, as long as the workload did the
// same thing each time (the points are numbered in the order the node executed them).
// Each state carries the power-failure rule (and seed) that makes an ordinary run of the
// same program fail there: `power_failure:point=K,side=S,loss=...` (the side of the
// connection whose request made the point, when one did).
#ifndef RPMA_SIM_PMEM_CRASH_EXPLORER_H_
#define RPMA_SIM_PMEM_CRASH_EXPLORER_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "sim/pmem/crash_journal.h"
#include "sim/pmem/persistence_domain.h"

namespace rpma_sim {

struct CrashExploreOptions {
  bool words = false;       // the torn states by 8-byte words
  bool lines = false;       // and by 64-byte lines
  uint32_t samples = 0;     // per point and torn mode, seeded subsets besides each unit alone
  uint64_t seed = 1;        // the first subset's seed (subset i: seed + i)
  uint64_t max_states = 0;  // stop after this many states given (0: no limit)
};

struct CrashState {
  uint64_t point = 0;                 // power fails just before it
  const CrashEvent* event = nullptr;  // the event at `point`; null after the last
  LossMode loss = LossMode::kAll;
  std::string reverted;  // what of the bytes not durable reverted, in words
  std::string rule;      // the power-failure rule that reproduces it
  uint64_t seed = 0;     // RPMA_SIM_SEED for the rule (seeded subsets; else 0)
  // Each region's image (in the journal's order of regions).
  const std::vector<std::vector<uint8_t>>* images = nullptr;
};

struct CrashExploreSummary {
  uint64_t points = 0;      // crash points in the journal
  uint64_t states = 0;      // states given to the check
  uint64_t duplicates = 0;  // skipped: their image equals one given before
  bool stopped = false;     // the check, or max_states, ended it early
};

// Gives every state to `check`, which returns false to stop. False with *error if the
// journal cannot be explored (a region without its final contents).
bool ExploreCrashStates(const CrashJournal& journal, const CrashExploreOptions& options,
                        const std::function<bool(const CrashState&)>& check,
                        CrashExploreSummary* summary, std::string* error);

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_CRASH_EXPLORER_H_
