// crash.cc -- rpma_sim_crash_*: recording a node's crash points, and the crash states and
// lint of a journal (sim/pmem/crash_journal.h, crash_explorer.h, crash_lint.h).
#include <librpma.h>
#include <rpma_sim.h>

#include <string>
#include <vector>

#include "api/inherited.h"
#include "api/types.h"
#include "sim/common/log.h"
#include "sim/pmem/crash_explorer.h"
#include "sim/pmem/crash_lint.h"

namespace {

// Reads `path`; logs why not.
bool ReadJournal(const char* call, const char* path, rpma_sim::CrashJournal* journal) {
  std::string error;
  if (rpma_sim::CrashJournal::ReadFrom(path, journal, &error)) return true;
  SIM_LOG_ERROR("%s: %s", call, error.c_str());
  return false;
}

rpma_sim_loss ToLoss(rpma_sim::LossMode loss) {
  switch (loss) {
    case rpma_sim::LossMode::kWords:
      return RPMA_SIM_LOSS_WORDS;
    case rpma_sim::LossMode::kLines:
      return RPMA_SIM_LOSS_LINES;
    case rpma_sim::LossMode::kNone:
      return RPMA_SIM_LOSS_NONE;
    case rpma_sim::LossMode::kAll:
      break;
  }
  return RPMA_SIM_LOSS_ALL;
}

}  // namespace

int rpma_sim_crash_record(struct rpma_peer* peer) {
  if (peer == nullptr) return RPMA_E_INVAL;
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  peer->pd->StartCrashRecording();
  return 0;
}

int rpma_sim_crash_record_stop(struct rpma_peer* peer, const char* journal) {
  if (peer == nullptr || journal == nullptr) return RPMA_E_INVAL;
  if (Inherited(*peer, __func__, "peer")) return RPMA_E_PROVIDER;
  if (!peer->pd->persistence().recording()) {
    SIM_LOG_ERROR("%s: the peer is not recording (rpma_sim_crash_record)", __func__);
    return RPMA_E_INVAL;
  }
  std::string error;
  if (!peer->pd->StopCrashRecording().WriteTo(journal, &error)) {
    SIM_LOG_ERROR("%s: %s", __func__, error.c_str());
    return RPMA_E_PROVIDER;
  }
  return 0;
}

// `truncated` took the padding after `stopped`: a program built before it passes a summary of
// the same size.
static_assert(sizeof(rpma_sim_crash_summary) == 32, "rpma_sim_crash_summary changed size");

int rpma_sim_crash_explore(const char* journal, const struct rpma_sim_crash_options* options,
                           rpma_sim_crash_check check, void* arg,
                           struct rpma_sim_crash_summary* summary) {
  if (journal == nullptr || check == nullptr) return RPMA_E_INVAL;
  rpma_sim::CrashJournal recorded;
  if (!ReadJournal(__func__, journal, &recorded)) return RPMA_E_INVAL;
  rpma_sim::CrashExploreOptions explore;
  if (options != nullptr) {
    explore.words = options->words != 0;
    explore.lines = options->lines != 0;
    explore.samples = options->samples;
    explore.seed = options->seed != 0 ? options->seed : 1;
    explore.max_states = options->max_states;
  }
  // The regions as the C API shows them; their images change from state to state.
  std::vector<rpma_sim_crash_region> regions(recorded.regions.size());
  for (size_t i = 0; i < regions.size(); ++i) {
    const rpma_sim::CrashRegion& region = recorded.regions[i];
    regions[i] = rpma_sim_crash_region{region.key,
                                       region.ordinal,
                                       region.address,
                                       region.file.c_str(),
                                       region.file_offset,
                                       static_cast<size_t>(region.length),
                                       nullptr};
  }
  auto give = [&](const rpma_sim::CrashState& state) {
    for (size_t i = 0; i < regions.size(); ++i) regions[i].image = (*state.images)[i].data();
    const std::string event =
        state.event != nullptr ? state.event->Describe() : std::string("after the last point");
    rpma_sim_crash_state shown{
        state.point,        event.c_str(), ToLoss(state.loss), state.reverted.c_str(),
        state.rule.c_str(), state.seed,    regions.size(),     regions.data()};
    return check(&shown, arg) == 0;
  };
  rpma_sim::CrashExploreSummary explored;
  std::string error;
  if (!rpma_sim::ExploreCrashStates(recorded, explore, give, &explored, &error)) {
    SIM_LOG_ERROR("%s: %s: %s", __func__, journal, error.c_str());
    return RPMA_E_INVAL;
  }
  if (summary != nullptr)
    *summary = rpma_sim_crash_summary{explored.points, explored.states, explored.duplicates,
                                      explored.stopped ? 1 : 0, recorded.truncated ? 1 : 0};
  return 0;
}

int rpma_sim_crash_lint(const char* journal, rpma_sim_crash_finding finding, void* arg) {
  if (journal == nullptr || finding == nullptr) return RPMA_E_INVAL;
  rpma_sim::CrashJournal recorded;
  if (!ReadJournal(__func__, journal, &recorded)) return RPMA_E_INVAL;
  const std::vector<std::string> findings = rpma_sim::LintCrashJournal(recorded);
  for (const std::string& line : findings) finding(line.c_str(), arg);
  return static_cast<int>(findings.size());
}
