// happens_before.h -- tells Valgrind's DRD about orderings it cannot see.
//
// Between the thread that sends a frame and the thread that reads it, the ordering goes
// through a socket or through a shared-memory ring's atomics; DRD models neither, so every
// byte a remote operation placed and the application read after its completion would look
// like a race to it. SIM_HAPPENS_BEFORE(key) before handing something over and
// SIM_HAPPENS_AFTER(key) after taking it state the ordering (DRD's client requests: a few
// instructions that do nothing outside Valgrind). Without Valgrind's headers they compile
// to nothing. ThreadSanitizer sees these orderings itself.
#ifndef RPMA_SIM_COMMON_HAPPENS_BEFORE_H_
#define RPMA_SIM_COMMON_HAPPENS_BEFORE_H_

#if defined(__has_include)
#if __has_include(<valgrind/drd.h>)
#include <valgrind/drd.h>
#define SIM_HAPPENS_BEFORE(key) ANNOTATE_HAPPENS_BEFORE(key)
#define SIM_HAPPENS_AFTER(key) ANNOTATE_HAPPENS_AFTER(key)
#endif
#endif

#ifndef SIM_HAPPENS_BEFORE
#define SIM_HAPPENS_BEFORE(key) ((void)(key))
#define SIM_HAPPENS_AFTER(key) ((void)(key))
#endif

#endif  // RPMA_SIM_COMMON_HAPPENS_BEFORE_H_
