/*
 * client.c -- the flush-to-persistent example, client side (the same for both servers):
 * writes a string into the server's memory and flushes it. If the server sent its peer
 * configuration, the client applies it to the connection; the flush type follows from what
 * the server registered its memory for: PERSISTENT if it may, VISIBILITY otherwise.
 * Built with FORGETS_FLUSH it writes and never flushes: the bug the simulator's persistence
 * report names and a power failure of the server punishes.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

static const char message[] = "This sentence survives a power failure (if flushed right).";

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_cq *cq = NULL;
	size_t offset = 0;
	int ret;

	/* the message is written from a copy in memory of its own */
	char *src = example_alloc(res, sizeof(message));
	if (src == NULL)
		return -1;
	memcpy(src, message, sizeof(message));
	if (example_mr_reg(res, src, sizeof(message), RPMA_MR_USAGE_WRITE_SRC, NULL, &src_mr))
		return -1;

	if (example_connect(res, addr, port, NULL) ||
			example_get_remote(res, sizeof(message), &offset, NULL, true))
		return -1;
	struct rpma_mr_remote *dst_mr = res->remote_mr;
	struct rpma_peer_cfg *pcfg = res->pcfg;

	if (pcfg) {
		bool direct = false;
		if ((ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct)))
			return example_fail(SIDE, "rpma_peer_cfg_get_direct_write_to_pmem", ret);
		if ((ret = rpma_conn_apply_remote_peer_cfg(res->conn, pcfg)))
			return example_fail(SIDE, "rpma_conn_apply_remote_peer_cfg", ret);
		example_say(SIDE,
				"applied the server's peer configuration: direct write to pmem "
				"is %s",
				direct ? "on" : "off");
	} else {
		example_say(SIDE, "the server sent no peer configuration");
	}

	int flush_usage = 0;
	if ((ret = rpma_mr_remote_get_flush_type(dst_mr, &flush_usage)))
		return example_fail(SIDE, "rpma_mr_remote_get_flush_type", ret);
	enum rpma_flush_type type;
	const char *type_name;
	if (flush_usage & RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT) {
		type = RPMA_FLUSH_TYPE_PERSISTENT;
		type_name = "RPMA_FLUSH_TYPE_PERSISTENT";
	} else if (flush_usage & RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY) {
		type = RPMA_FLUSH_TYPE_VISIBILITY;
		type_name = "RPMA_FLUSH_TYPE_VISIBILITY";
	} else {
		example_say(SIDE, "ERROR: the server's memory may not be flushed");
		return -1;
	}
	example_say(SIDE, "the server's memory is registered for %s", type_name);

	if (example_get_cqs(res, &cq, NULL))
		return -1;

	struct ibv_wc wc;
#ifdef FORGETS_FLUSH
	if ((ret = rpma_write(res->conn, dst_mr, offset, src_mr, 0, sizeof(message),
			     RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(SIDE, "rpma_write", ret);
	if (example_wait_completion(SIDE, cq, &wc))
		return -1;
	example_say(SIDE, "wrote \"%s\" to the server's memory and forgot to flush it", message);
	return 0;
#endif
	/* the write reports only a failure; the flush completes once the write has landed */
	if ((ret = rpma_write(res->conn, dst_mr, offset, src_mr, 0, sizeof(message),
			     RPMA_F_COMPLETION_ON_ERROR, NULL)))
		return example_fail(SIDE, "rpma_write", ret);
	example_say(SIDE, "wrote \"%s\" to the server's memory", message);
	if ((ret = rpma_flush(res->conn, dst_mr, offset, sizeof(message), type,
			     RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(SIDE, "rpma_flush", ret);
	if (example_wait_completion(SIDE, cq, &wc))
		return -1;
	example_say(SIDE, "flushed it with %s: the write is %s", type_name,
			type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistent" : "visible");
	return 0;
}
