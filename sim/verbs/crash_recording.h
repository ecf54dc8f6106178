// crash_recording.h -- RPMA_SIM_CRASH_JOURNAL=PATH: every node of the process records its
// crash points from its creation (crash_journal.h), for rpma-sim-crash to explore an
// unmodified program's run.
//
// Each node's journal is written to PATH.N, N its ordinal among the process's nodes (from
// 1), when the node goes (its last reference: rpma_peer_delete and the objects made from
// it) or, for a node still alive, at exit. "%p" in PATH is the process id. A journal that
// cannot be written is logged. Unset: nothing is recorded.
#ifndef RPMA_SIM_VERBS_CRASH_RECORDING_H_
#define RPMA_SIM_VERBS_CRASH_RECORDING_H_

namespace rpma_sim {

class ProtectionDomain;

// At a node's allocation: starts its recording if the variable asks for journals.
void BeginCrashJournalIfAsked(ProtectionDomain* pd);
// At its end: writes its journal, if it was recording for the variable.
void EndCrashJournal(ProtectionDomain* pd);

}  // namespace rpma_sim

#endif  // RPMA_SIM_VERBS_CRASH_RECORDING_H_
