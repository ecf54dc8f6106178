// seeded_draw.h -- reproducible pseudo-random draws: each one a function of the seed and of
// what it is drawn for, never of the order in which threads ask.
//
// Fault rules draw whether an event fires and how long a delay is; a power failure draws
// which words or lines of a region revert.
#ifndef RPMA_SIM_COMMON_SEEDED_DRAW_H_
#define RPMA_SIM_COMMON_SEEDED_DRAW_H_

#include <stdint.h>

namespace rpma_sim {

// splitmix64's finaliser: a well-mixed 64-bit function of x.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The draw for (`seed`, `what`, `stream`, `event`): `what` names the decision (a rule, a
// power failure), `stream` what it is made for (a connection, a region), `event` which one.
inline uint64_t Draw(uint64_t seed, uint64_t what, uint64_t stream, uint64_t event) {
  return Mix(Mix(Mix(Mix(seed) ^ what) ^ stream) ^ event);
}

}  // namespace rpma_sim

#endif  // RPMA_SIM_COMMON_SEEDED_DRAW_H_
