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
	struct rpma_peer *peer = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer))
		return -1;

	int usage = RPMA_MR_USAGE_WRITE_DST;
	if (pmem) {
		/* writes reach persistent memory directly: say so to the client */
		if ((ret = rpma_peer_cfg_new(&pcfg))) {
			example_fail(SIDE, "rpma_peer_cfg_new", ret);
			goto err_peer_delete;
		}
		if ((ret = rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true))) {
			example_fail(SIDE, "rpma_peer_cfg_set_direct_write_to_pmem", ret);
			goto err_pcfg_delete;
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
	if ((ret = rpma_mr_reg(peer, memory, sizeof(memory), usage, &mr))) {
		example_fail(SIDE, "rpma_mr_reg", ret);
		goto err_pcfg_delete;
	}

	/* the MR descriptor, followed on pmem by the 1-byte peer-cfg descriptor */
	struct example_common_data data;
	if (example_pack_descriptors(SIDE, mr, 0, pcfg, &data))
		goto err_mr_dereg;
	struct rpma_conn_private_data pdata = {&data, sizeof(data)};

	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		example_fail(SIDE, "rpma_ep_listen", ret);
		goto err_mr_dereg;
	}
	example_say(SIDE, "listening on %s:%s", addr, port);
	example_server_listening();

	if (example_server_accept(SIDE, ep, NULL, &pdata, &conn))
		goto err_ep_shutdown;
	example_say(SIDE, "sent the descriptor of my memory%s to the client as private data",
		pcfg ? " and of my peer configuration" : "");

	example_say(SIDE, "waiting for the client to write, flush and disconnect");
	if (example_wait_for_disconnect(SIDE, conn))
		goto err_conn_delete;
	memory[MEMORY_SIZE - 1] = '\0';
	example_say(SIDE, "the client has left; my memory now holds \"%s\"", memory);
	result = 0;

err_conn_delete:
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_ep_shutdown:
	if ((ret = rpma_ep_shutdown(&ep)))
		result = example_fail(SIDE, "rpma_ep_shutdown", ret);
err_mr_dereg:
	if ((ret = rpma_mr_dereg(&mr)))
		result = example_fail(SIDE, "rpma_mr_dereg", ret);
err_pcfg_delete:
	if ((ret = rpma_peer_cfg_delete(&pcfg)))
		result = example_fail(SIDE, "rpma_peer_cfg_delete", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
