/*
 * rpma_sim.h -- rpma-sim's extensions to the librpma API: the simulated device's
 * capabilities (and, in later versions, faults and the persistence model).
 *
 * Every setting here can also be given by an environment variable, so unmodified binaries
 * can be configured (README.md lists them). Under the real librpma backend these functions
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
};

/*
 * Sets or reads one capability of the simulated device. Peers created afterwards see the
 * new value. Returns 0, or RPMA_E_INVAL for an unknown capability or a NULL pointer.
 */
int rpma_sim_set_device_cap(enum rpma_sim_device_cap cap, bool enabled);
int rpma_sim_get_device_cap(enum rpma_sim_device_cap cap, bool *enabled);

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
int rpma_sim_node_fail(struct rpma_peer *peer);

/*
 * Fault injection (README, "Fault injection"). rpma_sim_fault_add() puts one or more rules
 * (separated by ';') in force for the whole process, as RPMA_SIM_FAULTS does; a rule that
 * is not understood is refused with RPMA_E_INVAL and a log line giving its position and the
 * reason, and then none of them is added. rpma_sim_fault_clear() removes every rule.
 * rpma_sim_fault_count() gives how many times rules have fired in this process. Each returns
 * 0, or RPMA_E_INVAL for a NULL argument.
 */
int rpma_sim_fault_add(const char *rule);
int rpma_sim_fault_clear(void);
int rpma_sim_fault_count(uint64_t *fired);

#ifdef __cplusplus
}
#endif

#endif /* RPMA_SIM_H */
