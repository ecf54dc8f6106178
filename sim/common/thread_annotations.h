// thread_annotations.h -- clang's thread-safety annotations, as macros that are empty for
// compilers without them (GCC).
//
// Every mutex-guarded member says which capability guards it (GUARDED_BY), every function
// that must be called with a lock held says so (REQUIRES), and the functions that take and
// give back a lock say that (ACQUIRE, RELEASE). `bazel build --config=tsa //sim/... //api/...`
// (clang -Wthread-safety -Werror) checks them; CI runs it. The capabilities and their order
// are listed in docs/architecture.md, "Locks".
#ifndef RPMA_SIM_COMMON_THREAD_ANNOTATIONS_H_
#define RPMA_SIM_COMMON_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define RPMA_SIM_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define RPMA_SIM_THREAD_ANNOTATION(x)
#endif

// A type whose objects are capabilities (a mutex, or a stand-in for one).
#define CAPABILITY(name) RPMA_SIM_THREAD_ANNOTATION(capability(name))
// A type whose objects hold a capability for their lifetime (a lock guard).
#define SCOPED_CAPABILITY RPMA_SIM_THREAD_ANNOTATION(scoped_lockable)
// A member that may be read or written only with the capability held.
#define GUARDED_BY(x) RPMA_SIM_THREAD_ANNOTATION(guarded_by(x))
// A pointer whose pointee may be used only with the capability held.
#define PT_GUARDED_BY(x) RPMA_SIM_THREAD_ANNOTATION(pt_guarded_by(x))
// Capabilities to be taken before (after) this one: the lock order.
#define ACQUIRED_BEFORE(...) RPMA_SIM_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) RPMA_SIM_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
// The caller must hold the capability (exclusively, or at least shared).
#define REQUIRES(...) RPMA_SIM_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) RPMA_SIM_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// The function takes (gives back) the capability.
#define ACQUIRE(...) RPMA_SIM_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) RPMA_SIM_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) RPMA_SIM_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) RPMA_SIM_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) RPMA_SIM_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// The caller must not hold the capability (the function takes it).
#define EXCLUDES(...) RPMA_SIM_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function checks at run time, or knows by construction, that the capability is held.
#define ASSERT_CAPABILITY(x) RPMA_SIM_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) RPMA_SIM_THREAD_ANNOTATION(assert_shared_capability(x))
// The function returns a reference to the capability.
#define RETURN_CAPABILITY(x) RPMA_SIM_THREAD_ANNOTATION(lock_returned(x))
// Not analysed; each use says why.
#define NO_THREAD_SAFETY_ANALYSIS RPMA_SIM_THREAD_ANNOTATION(no_thread_safety_analysis)

#endif  // RPMA_SIM_COMMON_THREAD_ANNOTATIONS_H_
