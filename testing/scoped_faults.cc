// scoped_faults.cc -- fault rules in force for a scope, with the seed named in every failure.
#include "rpma_sim/testing.h"

namespace rpma_sim {
namespace testing {
namespace {

uint64_t CurrentSeed() {
  uint64_t seed = 0;
  EXPECT_EQ(0, rpma_sim_fault_seed(&seed));
  return seed;
}

uint64_t Fired() {
  uint64_t fired = 0;
  EXPECT_EQ(0, rpma_sim_fault_count(&fired));
  return fired;
}

std::string ReplayNote(uint64_t seed) {
  return "fault rules in force; RPMA_SIM_SEED=" + std::to_string(seed) + " replays their choices";
}

}  // namespace

ScopedFaults::ScopedFaults(const std::string& rules, const char* file, int line)
    : seed_(CurrentSeed()), fired_before_(Fired()), trace_(file, line, ReplayNote(seed_)) {
  EXPECT_EQ(0, rpma_sim_fault_add(rules.c_str())) << "fault rules not understood: " << rules;
}

ScopedFaults::~ScopedFaults() { EXPECT_EQ(0, rpma_sim_fault_clear()); }

uint64_t ScopedFaults::fired() const { return Fired() - fired_before_; }

}  // namespace testing
}  // namespace rpma_sim
