/*
 * server.c -- the flush-to-persistent example, server side: exposes memory the client may
 * write and flush. On persistent memory it also tells the client, with its peer
 * configuration, that incoming writes go straight to persistent memory, and registers the
 * memory for RPMA_FLUSH_TYPE_PERSISTENT; on DRAM it registers it for
 * RPMA_FLUSH_TYPE_VISIBILITY only. After the client has left it prints what is in its memory.
 */
#include <string.h>

#include "examples/common/example.h"
#include "examples/flush-to-persistent/server.h"

#define SIDE "server"
#define MEMORY_SIZE 64

static char memory[MEMORY_SIZE];

int
flush_server(const char *addr, const char *port, bool pmem)
{
	struct example_res res;
	struct rpma_mr_local *mr = NULL;
	int ret, result = -1;

	if (example_begin(&res, SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL))
		goto out;

	int usage = RPMA_MR_USAGE_WRITE_DST;
	if (pmem) {
		/* writes reach persistent memory directly: say so to the client */
		if ((ret = rpma_peer_cfg_new(&res.pcfg))) {
			example_fail(SIDE, "rpma_peer_cfg_new", ret);
			goto out;
		}
		if ((ret = rpma_peer_cfg_set_direct_write_to_pmem(res.pcfg, true))) {
			example_fail(SIDE, "rpma_peer_cfg_set_direct_write_to_pmem", ret);
			goto out;
		}
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT;
		example_say(SIDE, "my memory is persistent: direct write to pmem is on, "
			"registering it for RPMA_FLUSH_TYPE_PERSISTENT");
	} else {
		usage |= RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY;
		example_say(SIDE, "my memory is DRAM: registering it for "
			"RPMA_FLUSH_TYPE_VISIBILITY");
	}

	memset(memory, 0, sizeof(memory));
	if (example_mr_reg(&res, memory, sizeof(memory), usage, NULL, &mr))
		goto out;

	/* the MR descriptor, followed on pmem by the 1-byte peer-cfg descriptor */
	if (example_pack_mr(&res, mr, 0) || example_listen(&res, addr, port) ||
			example_accept(&res, &res.pdata))
		goto out;
	example_say(SIDE, "sent the descriptor of my memory%s to the client as private data",
		res.pcfg ? " and of my peer configuration" : "");

	example_say(SIDE, "waiting for the client to write, flush and disconnect");
	if (example_wait_for_disconnect(SIDE, res.conn))
		goto out;
	memory[MEMORY_SIZE - 1] = '\0';
	example_say(SIDE, "the client has left; my memory now holds \"%s\"", memory);
	result = 0;
out:
	return example_end(&res, result);
}
