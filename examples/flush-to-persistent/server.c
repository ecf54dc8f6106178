/*
 * server.c -- the flush-to-persistent example, server side: exposes memory the client may
 * write and flush. On persistent memory it also tells the client, with its peer
 * configuration, that incoming writes go straight to persistent memory, and registers the
 * memory for RPMA_FLUSH_TYPE_PERSISTENT; on DRAM it registers it for
 * RPMA_FLUSH_TYPE_VISIBILITY only. After the client has left it prints what is in its memory,
 * and then, on the simulator, loses power (rpma_sim.h) and prints what survived: what the
 * client flushed to persistence on persistent memory, nothing on DRAM.
 */
#include <rpma_sim.h>
#include <string.h>

#include "examples/common/example.h"
#include "examples/flush-to-persistent/server.h"

#define SIDE "server"
#define MEMORY_SIZE 64

int
flush_server(struct example_res *res, const char *addr, const char *port, bool pmem)
{
	struct rpma_mr_local *mr = NULL;
	int ret;

	/*
	 * warnings on stderr too (librpma's default sends them to syslog only): on the
	 * simulator, that is where its report of writes never made durable appears
	 */
	if ((ret = rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, RPMA_LOG_LEVEL_WARNING)))
		return example_fail(SIDE, "rpma_log_set_threshold", ret);

	int usage = RPMA_MR_USAGE_WRITE_DST;
	if (pmem) {
		/* writes reach persistent memory directly: say so to the client */
		if ((ret = rpma_peer_cfg_new(&res->pcfg)))
			return example_fail(SIDE, "rpma_peer_cfg_new", ret);
		if ((ret = rpma_peer_cfg_set_direct_write_to_pmem(res->pcfg, true)))
			return example_fail(SIDE, "rpma_peer_cfg_set_direct_write_to_pmem", ret);
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
		example_say(SIDE,
				"my memory is persistent: direct write to pmem is on, "
				"registering it for RPMA_FLUSH_TYPE_PERSISTENT");
	} else {
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
		example_say(SIDE,
				"my memory is DRAM: registering it for "
				"RPMA_FLUSH_TYPE_VISIBILITY");
	}

	/*
	 * the simulator keeps what the client's writes overwrite from now on, so that a power
	 * failure can put it back (real hardware needs no arming: RPMA_E_NOSUPP)
	 */
	bool simulated = rpma_sim_power_failure_arm(res->peer) == 0;

	char *memory = example_alloc(res, MEMORY_SIZE);
	if (memory == NULL || example_mr_reg(res, memory, MEMORY_SIZE, usage, NULL, &mr))
		return -1;

	/* the MR descriptor, followed on pmem by the 1-byte peer-cfg descriptor */
	if (example_pack_mr(res, mr, 0) || example_listen(res, addr, port) ||
			example_accept(res, &res->pdata))
		return -1;
	example_say(SIDE, "sent the descriptor of my memory%s to the client as private data",
			res->pcfg ? " and of my peer configuration" : "");

	example_say(SIDE, "waiting for the client to write, flush and disconnect");
	if (example_wait_for_disconnect(SIDE, res->conn))
		return -1;
	memory[MEMORY_SIZE - 1] = '\0';
	example_say(SIDE, "the client has left; my memory now holds \"%s\"", memory);
	if (!simulated)
		return 0;

	/* what a crash would leave: what was not made durable reverts */
	if ((ret = rpma_sim_power_failure(res->peer, RPMA_SIM_LOSS_ALL)))
		return example_fail(SIDE, "rpma_sim_power_failure", ret);
	example_say(SIDE, "after a power failure my memory holds \"%s\"", memory);
	return 0;
}
