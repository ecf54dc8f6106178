/*
 * client.c -- the read example, client side: gets the descriptor of the server's memory from
 * the connection's private data and reads that memory with rpma_read into a local buffer.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_remote *src_mr = NULL;
	char buffer[64];
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer))
		return -1;

	/* the local buffer the read lands in */
	memset(buffer, 0, sizeof(buffer));
	if ((ret = rpma_mr_reg(peer, buffer, sizeof(buffer), RPMA_MR_USAGE_READ_DST, &dst_mr))) {
		example_fail(SIDE, "rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	example_say(SIDE, "connecting to %s:%s", addr, port);
	if (example_client_connect(SIDE, peer, addr, port, NULL, NULL, &conn))
		goto err_mr_dereg;

	size_t offset = 0, size = 0;
	if (example_unpack_descriptors(SIDE, conn, &src_mr, &offset, NULL))
		goto err_disconnect;
	if ((ret = rpma_mr_remote_get_size(src_mr, &size))) {
		example_fail(SIDE, "rpma_mr_remote_get_size", ret);
		goto err_mr_remote_delete;
	}
	example_say(SIDE, "the server's memory region has %zu bytes", size);
	size_t len = size - offset;
	if (len > sizeof(buffer) - 1)
		len = sizeof(buffer) - 1; /* keep a terminating zero of our own */

	if ((ret = rpma_read(conn, dst_mr, 0, src_mr, offset, len, RPMA_F_COMPLETION_ALWAYS,
			NULL))) {
		example_fail(SIDE, "rpma_read", ret);
		goto err_mr_remote_delete;
	}
	example_say(SIDE, "reading %zu bytes from the server's memory", len);

	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_mr_remote_delete;
	}
	if (example_wait_completion(SIDE, cq, &wc))
		goto err_mr_remote_delete;
	if (wc.opcode != IBV_WC_RDMA_READ) {
		example_say(SIDE, "ERROR: expected a read completion, got opcode %d", wc.opcode);
		goto err_mr_remote_delete;
	}
	example_say(SIDE, "read \"%s\" from the server's memory", buffer);
	result = 0;

err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&src_mr);
err_disconnect:
	if (example_disconnect(SIDE, conn))
		result = -1;
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_mr_dereg:
	if ((ret = rpma_mr_dereg(&dst_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
