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

#ifdef __cplusplus
}
#endif

#endif /* RPMA_SIM_H */
