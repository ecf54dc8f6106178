/*
 * client.c -- the flush-to-persistent example, client side (the same for both servers):
 * writes a string into the server's memory and flushes it. If the server sent its peer
 * configuration, the client applies it to the connection; the flush type follows from what
 * the server registered its memory for: PERSISTENT if it may, VISIBILITY otherwise.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

static char message[] = "This sentence survives a power failure (if flushed right).";

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
	struct rpma_peer_cfg *pcfg = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer))
		return -1;
	if ((ret = rpma_mr_reg(peer, message, sizeof(message), RPMA_MR_USAGE_WRITE_SRC,
			&src_mr))) {
		example_fail(SIDE, "rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	example_say(SIDE, "connecting to %s:%s", addr, port);
	if (example_client_connect(SIDE, peer, addr, port, NULL, NULL, &conn))
		goto err_mr_dereg;

	size_t offset = 0, size = 0;
	if (example_unpack_descriptors(SIDE, conn, &dst_mr, &offset, &pcfg))
		goto err_disconnect;
	if ((ret = rpma_mr_remote_get_size(dst_mr, &size))) {
		example_fail(SIDE, "rpma_mr_remote_get_size", ret);
		goto err_mr_remote_delete;
	}
	if (offset + sizeof(message) > size) {
		example_say(SIDE, "ERROR: the server's memory (%zu bytes) is too small", size);
		goto err_mr_remote_delete;
	}

	if (pcfg) {
		bool direct = false;
		if ((ret = rpma_peer_cfg_get_direct_write_to_pmem(pcfg, &direct))) {
			example_fail(SIDE, "rpma_peer_cfg_get_direct_write_to_pmem", ret);
			goto err_pcfg_delete;
		}
		if ((ret = rpma_conn_apply_remote_peer_cfg(conn, pcfg))) {
			example_fail(SIDE, "rpma_conn_apply_remote_peer_cfg", ret);
			goto err_pcfg_delete;
		}
		example_say(SIDE, "applied the server's peer configuration: direct write to pmem "
			"is %s", direct ? "on" : "off");
	} else {
		example_say(SIDE, "the server sent no peer configuration");
	}

	int flush_usage = 0;
	if ((ret = rpma_mr_remote_get_flush_type(dst_mr, &flush_usage))) {
		example_fail(SIDE, "rpma_mr_remote_get_flush_type", ret);
		goto err_pcfg_delete;
	}
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
		goto err_pcfg_delete;
	}
	example_say(SIDE, "the server's memory is registered for %s", type_name);

	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_pcfg_delete;
	}

	/* the write reports only a failure; the flush completes once the write has landed */
	if ((ret = rpma_write(conn, dst_mr, offset, src_mr, 0, sizeof(message),
			RPMA_F_COMPLETION_ON_ERROR, NULL))) {
		example_fail(SIDE, "rpma_write", ret);
		goto err_pcfg_delete;
	}
	example_say(SIDE, "wrote \"%s\" to the server's memory", message);
	if ((ret = rpma_flush(conn, dst_mr, offset, sizeof(message), type,
			RPMA_F_COMPLETION_ALWAYS, NULL))) {
		example_fail(SIDE, "rpma_flush", ret);
		goto err_pcfg_delete;
	}
	struct ibv_wc wc;
	if (example_wait_completion(SIDE, cq, &wc))
		goto err_pcfg_delete;
	example_say(SIDE, "flushed it with %s: the write is %s", type_name,
		type == RPMA_FLUSH_TYPE_PERSISTENT ? "persistent" : "visible");
	result = 0;

err_pcfg_delete:
	if ((ret = rpma_peer_cfg_delete(&pcfg)))
		result = example_fail(SIDE, "rpma_peer_cfg_delete", ret);
err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&dst_mr);
err_disconnect:
	if (example_disconnect(SIDE, conn))
		result = -1;
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_mr_dereg:
	if ((ret = rpma_mr_dereg(&src_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
