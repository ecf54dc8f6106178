// Runs the generated header checks; the main proof is that header_check.c compiled as C and C++.
#include <cstddef>
#include <cstdio>

#include "librpma.h"

// Defined by the generated header_check.c (compiled as C) and header_check.cc (as C++).
extern "C" {
int hc_prototypes_c(void);
int hc_constants_c(void);
int hc_enumerators_c(void);
int hc_runtime_failures_c(void);
int hc_prototypes_cxx(void);
int hc_constants_cxx(void);
int hc_enumerators_cxx(void);
int hc_runtime_failures_cxx(void);
}

namespace {

// What librpma 1.3 (Debian's librpma-dev) declares.
constexpr int kExpectedPrototypes = 84;
constexpr int kExpectedConstants = 24;    // valued #define RPMA_* macros
constexpr int kExpectedEnumerators = 20;  // in 5 enums

// Known layout of the only public struct on LP64 (the generated file also compares it with a
// copy of the real definition).
static_assert(sizeof(void*) != 8 || offsetof(rpma_conn_private_data, ptr) == 0, "ptr offset");
static_assert(sizeof(void*) != 8 || offsetof(rpma_conn_private_data, len) == 8, "len offset");
static_assert(sizeof(void*) != 8 || sizeof(rpma_conn_private_data) == 16, "struct size");

int failures = 0;

void Expect(const char* what, int got, int want) {
  std::printf("%-40s %3d (expected %d)%s\n", what, got, want, got == want ? "" : "  FAILED");
  if (got != want) ++failures;
}

}  // namespace

int main() {
  Expect("prototypes checked as C", hc_prototypes_c(), kExpectedPrototypes);
  Expect("prototypes checked as C++", hc_prototypes_cxx(), kExpectedPrototypes);
  Expect("constants checked as C", hc_constants_c(), kExpectedConstants);
  Expect("constants checked as C++", hc_constants_cxx(), kExpectedConstants);
  Expect("enumerators checked as C", hc_enumerators_c(), kExpectedEnumerators);
  Expect("enumerators checked as C++", hc_enumerators_cxx(), kExpectedEnumerators);
  Expect("run-time constant mismatches (C)", hc_runtime_failures_c(), 0);
  Expect("run-time constant mismatches (C++)", hc_runtime_failures_cxx(), 0);
  std::printf("%s\n", failures == 0 ? "PASS: our librpma.h matches the real one"
                                    : "FAIL: our librpma.h differs from the real one");
  return failures == 0 ? 0 : 1;
}
