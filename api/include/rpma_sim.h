/*
 * rpma_sim.h -- rpma-sim's extensions to the librpma API: the simulated device's
 * capabilities, node failure, fault injection and the persistence model.
 *
 * Every setting here can also be given by an environment variable, so unmodified binaries
 * can be configured (rpma_sim(7) lists them). Under the real librpma backend these functions
 * return RPMA_E_NOSUPP.
 */
#ifndef RPMA_SIM_H
#define RPMA_SIM_H 1

#include <librpma.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * rdma-core 45 added IBV_WC_FLUSH (8), the completion opcode of a native flush; Debian 12
 * ships rdma-core 44. Defining it after <infiniband/verbs.h> is safe with either version.
 */
#ifndef IBV_WC_FLUSH
#define IBV_WC_FLUSH ((enum ibv_wc_opcode)8)
#endif

/* capabilities of the simulated RDMA device, read by rpma_peer_new() */
enum rpma_sim_device_cap {
  /* memory behind the device is persistent (RPMA_SIM_PMEM, default on) */
  RPMA_SIM_CAP_PERSISTENT_MEMORY,
  /* flush completes as IBV_WC_FLUSH (RPMA_SIM_NATIVE_FLUSH, default off) */
  RPMA_SIM_CAP_NATIVE_FLUSH,
  /* atomic write completes as IBV_WC_ATOMIC_WRITE (RPMA_SIM_NATIVE_ATOMIC_WRITE, off) */
  RPMA_SIM_CAP_NATIVE_ATOMIC_WRITE,
  /* on-demand paging (RPMA_SIM_ODP, default off) */
  RPMA_SIM_CAP_ODP,
  /* eADR: CPU caches are in the persistence domain, so a completed
   * RPMA_FLUSH_TYPE_VISIBILITY flush makes its range durable too (RPMA_SIM_EADR, off) */
  RPMA_SIM_CAP_EADR,
  /* the portable flush (an 8-byte read; not with RPMA_SIM_CAP_NATIVE_FLUSH) makes every
   * earlier write of its connection durable, not only its range
   * (RPMA_SIM_FLUSH_SCOPE=qp; default range) */
  RPMA_SIM_CAP_FLUSH_SCOPE_QP,
};

/*
 * Sets or reads one capability of the simulated device. Peers created afterwards see the
 * new value. Returns 0, or RPMA_E_INVAL for an unknown capability or a NULL pointer.
 */
int rpma_sim_set_device_cap(enum rpma_sim_device_cap cap, bool enabled);
int rpma_sim_get_device_cap(enum rpma_sim_device_cap cap, bool* enabled);

/* how connections reach their peer (RPMA_SIM_TRANSPORT; docs/transports.md) */
enum rpma_sim_transport {
  /* in process to a listener of this process, shared memory to this host, else TCP */
  RPMA_SIM_TRANSPORT_AUTO,
  /* only listeners of this process (others: RPMA_CONN_REJECTED) */
  RPMA_SIM_TRANSPORT_INPROC,
  /* shared memory, even to a listener of this process; only peers of this host */
  RPMA_SIM_TRANSPORT_SHM,
  /* TCP, even to a listener of this process */
  RPMA_SIM_TRANSPORT_TCP,
};

/*
 * Sets or reads the transport of the connections made from now on (as RPMA_SIM_TRANSPORT
 * does; connections already made keep theirs). Each returns 0, or RPMA_E_INVAL for a value
 * that is not an rpma_sim_transport or a NULL pointer.
 */
int rpma_sim_set_transport(enum rpma_sim_transport transport);
int rpma_sim_get_transport(enum rpma_sim_transport* transport);

/*
 * Fails the fabric node that peer is (every rpma_peer is one node, even when both sides of a
 * connection live in one process), as when its host or NIC dies: each connection of the
 * peer, established or being set up, is lost on both sides. Each side's
 * rpma_conn_next_event() returns RPMA_CONN_LOST (a request still being set up ends as
 * RPMA_CONN_UNREACHABLE), and its outstanding and later work requests complete with
 * IBV_WC_WR_FLUSH_ERR, after those that had completed already. The peer itself stays usable:
 * new connections work as before. Memory is not touched.
 * Returns 0, or RPMA_E_INVAL if peer is NULL.
 */
int rpma_sim_node_fail(struct rpma_peer* peer);

/*
 * Fault injection (docs/fault-injection.md). rpma_sim_fault_add() puts one or more rules
 * (separated by ';') in force for the whole process, as RPMA_SIM_FAULTS does; a rule that
 * is not understood is refused with RPMA_E_INVAL and a log line giving its position and the
 * reason, and then none of them is added. rpma_sim_fault_clear() removes every rule.
 * rpma_sim_fault_count() gives how many times rules have fired in this process. Each returns
 * 0, or RPMA_E_INVAL for a NULL argument.
 */
int rpma_sim_fault_add(const char* rule);
int rpma_sim_fault_clear(void);
int rpma_sim_fault_count(uint64_t* fired);

/*
 * The seed every fault choice (a rule's probability, a delay, a torn power failure's words
 * and lines) is drawn from: RPMA_SIM_SEED, or the random one drawn at start (printed when the
 * first rule comes into force). rpma_sim_fault_set_seed() replaces it for the choices made
 * from now on: rules added afterwards choose as the same rules added first in a process
 * started with RPMA_SIM_SEED=seed (so a test replays its choices), and the next rule added
 * prints it. rpma_sim_fault_seed() returns 0, or
 * RPMA_E_INVAL if seed is NULL; rpma_sim_fault_set_seed() returns 0.
 */
int rpma_sim_fault_seed(uint64_t* seed);
int rpma_sim_fault_set_seed(uint64_t seed);

/*
 * librpma's own fault injection from code (docs/fault-injection.md), as
 * RPMA_FAULT_INJECTION=N sets it: from now on the Nth librpma fault point passed fails, the
 * count starting again at 0; n == 0 turns it off (no point counts or prints).
 * rpma_sim_fault_point_passed() gives how many points were passed since the last
 * rpma_sim_fault_point_set() (or since RPMA_FAULT_INJECTION was read), so a run that passed
 * fewer than n points met no failing one. Each returns 0, or RPMA_E_INVAL if n < 0 or passed
 * is NULL.
 */
int rpma_sim_fault_point_set(int64_t n);
int rpma_sim_fault_point_passed(int64_t* passed);

/*
 * The persistence model (docs/persistence.md). Bytes that a remote
 * operation places in a peer's registered memory are not durable until a completed flush
 * makes them so: on persistent memory a PERSISTENT flush of their range (more with
 * RPMA_SIM_CAP_EADR or RPMA_SIM_CAP_FLUSH_SCOPE_QP); on DRAM (RPMA_SIM_PMEM=0) never.
 */

/* what of the bytes not durable a power failure reverts to their value before the writes */
enum rpma_sim_loss {
  RPMA_SIM_LOSS_ALL,   /* every byte (the default) */
  RPMA_SIM_LOSS_WORDS, /* a seeded random subset of 8-byte words: torn state */
  RPMA_SIM_LOSS_LINES, /* a seeded random subset of 64-byte lines: torn state */
  RPMA_SIM_LOSS_NONE,  /* none: everything placed survives */
};

/*
 * Arms peer for a power failure: from now on every remote placement in its memory keeps the
 * value it overwrites, so that a power failure can put it back. (While a power_failure fault
 * rule is in force, every peer is armed.) Unarmed, only the ranges are kept, for the report.
 * Returns 0, or RPMA_E_INVAL if peer is NULL.
 */
int rpma_sim_power_failure_arm(struct rpma_peer* peer);

/*
 * A power failure of the node that peer is: its connections are lost on both sides (as
 * rpma_sim_node_fail()), then each of its registered regions reverts what was not durable
 * as mode says, and everything in them counts as durable afterwards. The peer stays usable:
 * a test can "restart" its server in the same process. Words and lines are chosen from the
 * seed (RPMA_SIM_SEED). Returns 0, or RPMA_E_INVAL if peer is NULL, mode is not an
 * rpma_sim_loss, or mode is not RPMA_SIM_LOSS_NONE and the peer was not armed (nothing is
 * done then).
 */
int rpma_sim_power_failure(struct rpma_peer* peer, enum rpma_sim_loss mode);

/*
 * The target's own CPU made [addr, addr + len) durable (as pmem_persist() does; librpma's
 * GPSPM pattern), for any registered memory of this process it overlaps. Returns 0, or
 * RPMA_E_INVAL if addr is NULL or len is 0.
 */
int rpma_sim_persist(const void* addr, size_t len);

/*
 * Logs (WARNING) every range placed in this process's registered memory and not yet made
 * durable, whichever connection placed it, with the flush that would cover it. When a
 * connection ends this is logged for what it placed, unless RPMA_SIM_PERSISTENCE_REPORT=0.
 * Returns the number of ranges reported (0: everything placed is durable).
 */
int rpma_sim_persistence_report(void);

/*
 * Crash states (docs/crash-states.md, rpma_sim_crash_record(3)). A crash point of a node is
 * an event that can change what a power failure leaves in its memory: a remote placement
 * (write, write with imm, atomic write, send into a receive buffer) or a completed flush or
 * rpma_sim_persist(), numbered from 1 in the order the node executes them.
 *
 * rpma_sim_crash_record() starts recording peer's crash points (and arms it, as
 * rpma_sim_power_failure_arm()); rpma_sim_crash_record_stop() stops and writes the journal
 * to the file `journal`: the points, what each placement overwrote, and each region's
 * contents at the end. (RPMA_SIM_CRASH_JOURNAL=PATH records every node of a process.) Both
 * return 0, RPMA_E_INVAL if an argument is NULL or the peer is not recording (stop), or
 * RPMA_E_PROVIDER if the journal cannot be written (logged).
 */
int rpma_sim_crash_record(struct rpma_peer* peer);
int rpma_sim_crash_record_stop(struct rpma_peer* peer, const char* journal);

/* one region's image in a crash state */
struct rpma_sim_crash_region {
  uint32_t rkey;
  uint32_t ordinal;     /* among its node's registrations, from 1 (a rule's keep=) */
  uint64_t address;     /* where it was in the recording process */
  const char* file;     /* the file it maps ("" for anonymous memory) */
  uint64_t file_offset; /* of its first byte in that file */
  size_t length;
  const uint8_t* image; /* what it holds in this state */
};

/* the memory of a node if power fails just before crash point `point` */
struct rpma_sim_crash_state {
  uint64_t point;
  const char* event;       /* the point's event ("after the last point" for the last state) */
  enum rpma_sim_loss loss; /* ALL, or WORDS / LINES for a torn state */
  const char* reverted;    /* what of the bytes not durable reverted */
  const char* rule;        /* the power_failure rule that makes an ordinary run fail there
                              ("" after the last point: rpma_sim_power_failure at the end) */
  uint64_t seed;           /* the RPMA_SIM_SEED the rule needs, or 0 */
  size_t regions;
  const struct rpma_sim_crash_region* region;
};

struct rpma_sim_crash_options {
  int words;           /* nonzero: the torn states by 8-byte words too */
  int lines;           /* nonzero: and by 64-byte lines */
  unsigned samples;    /* per point and torn mode: seeded subsets besides each unit alone */
  uint64_t seed;       /* the first subset's seed (0: 1) */
  uint64_t max_states; /* stop after this many (0: no limit) */
};

struct rpma_sim_crash_summary {
  uint64_t points;     /* crash points in the journal */
  uint64_t states;     /* states given to the check */
  uint64_t duplicates; /* states skipped: their image equals one given before */
  int stopped;         /* the check or max_states ended it early */
  int truncated;       /* the recording ended early, at the journal's limit (256 MiB): what
                          the run did after was not recorded, so its states are not here */
};

/* returns 0 to go on to the next state, anything else to stop */
typedef int (*rpma_sim_crash_check)(const struct rpma_sim_crash_state* state, void* arg);

/*
 * Gives every crash state of the journal to check (options may be NULL: loss mode all
 * only). Returns 0 (and *summary, if not NULL), or RPMA_E_INVAL if journal or check is NULL
 * or the file is not a journal that can be explored (logged).
 */
int rpma_sim_crash_explore(const char* journal, const struct rpma_sim_crash_options* options,
                           rpma_sim_crash_check check, void* arg,
                           struct rpma_sim_crash_summary* summary);

/*
 * Tells finding each line of the journal's lint: flushes that made nothing durable, ranges
 * flushed twice with no write between, a PERSISTENT flush where VISIBILITY was needed or
 * the reverse, writes never made durable. Returns how many (0 or more), or RPMA_E_INVAL as
 * rpma_sim_crash_explore().
 */
typedef void (*rpma_sim_crash_finding)(const char* line, void* arg);
int rpma_sim_crash_lint(const char* journal, rpma_sim_crash_finding finding, void* arg);

#ifdef __cplusplus
}
#endif

#endif /* RPMA_SIM_H */
