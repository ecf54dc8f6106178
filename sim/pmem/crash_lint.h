// crash_lint.h -- what a recorded run's flushes did and did not do (crash_journal.h): the
// findings rpma-sim-crash and the testing kit print beside the crash states.
//
//   - a flush that made nothing durable (nothing placed there since the journal began);
//   - a range flushed twice with no write between (the second flush does nothing);
//   - a PERSISTENT flush where a VISIBILITY flush would do (eADR: visible is durable), or
//     where nothing can be durable (DRAM);
//   - a VISIBILITY flush over placed bytes on persistent memory without eADR: they are not
//     durable after it, and a power failure loses them (PERSISTENT was needed);
//   - writes never made durable by the end of the journal (what the persistence report says
//     when a connection ends).
#ifndef RPMA_SIM_PMEM_CRASH_LINT_H_
#define RPMA_SIM_PMEM_CRASH_LINT_H_

#include <string>
#include <vector>

#include "sim/pmem/crash_journal.h"

namespace rpma_sim {

// One line per finding, each naming the crash point ("point 12: ...").
std::vector<std::string> LintCrashJournal(const CrashJournal& journal);

}  // namespace rpma_sim

#endif  // RPMA_SIM_PMEM_CRASH_LINT_H_
