// fuzz_check.h -- FUZZ_CHECK(condition): the invariants a fuzz target asserts about what it
// decoded. A broken one prints where and aborts, which libFuzzer reports as a crash (with the input
// saved) and the corpus replay test (replay_main.cc) as a failure.
#ifndef RPMA_SIM_TESTS_FUZZ_FUZZ_CHECK_H_
#define RPMA_SIM_TESTS_FUZZ_FUZZ_CHECK_H_

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_CHECK(condition)                                                           \
  do {                                                                                  \
    if (!(condition)) {                                                                 \
      fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #condition); \
      abort();                                                                          \
    }                                                                                   \
  } while (0)

#endif  // RPMA_SIM_TESTS_FUZZ_FUZZ_CHECK_H_
