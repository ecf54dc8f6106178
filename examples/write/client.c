/*
 * client.c -- the write example, client side: writes a string into the server's memory with
 * rpma_write, then reads it back with rpma_read and compares. On one connection a read
 * completes only after every earlier write has been placed, so the read-back sees the write
 * and proves it reached the server's memory.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"
#define BUFFER_SIZE 64

static const char message[] = "Written by the client with rpma_write.";

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL, *dst_mr = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_remote *remote_mr = NULL;
	static char src[BUFFER_SIZE], dst[BUFFER_SIZE];
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer))
		return -1;

	/* src: what the client writes; dst: where the read-back lands */
	memset(src, 0, sizeof(src));
	memset(dst, 0, sizeof(dst));
	memcpy(src, message, sizeof(message));
	if ((ret = rpma_mr_reg(peer, src, sizeof(src), RPMA_MR_USAGE_WRITE_SRC, &src_mr))) {
		example_fail(SIDE, "rpma_mr_reg(src)", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, dst, sizeof(dst), RPMA_MR_USAGE_READ_DST, &dst_mr))) {
		example_fail(SIDE, "rpma_mr_reg(dst)", ret);
		goto err_src_mr_dereg;
	}

	example_say(SIDE, "connecting to %s:%s", addr, port);
	if (example_client_connect(SIDE, peer, addr, port, NULL, NULL, &conn))
		goto err_dst_mr_dereg;

	size_t offset = 0, size = 0;
	if (example_unpack_descriptors(SIDE, conn, &remote_mr, &offset, NULL))
		goto err_disconnect;
	if ((ret = rpma_mr_remote_get_size(remote_mr, &size))) {
		example_fail(SIDE, "rpma_mr_remote_get_size", ret);
		goto err_mr_remote_delete;
	}
	if (offset + sizeof(message) > size) {
		example_say(SIDE, "ERROR: the server's memory (%zu bytes) is too small", size);
		goto err_mr_remote_delete;
	}

	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_mr_remote_delete;
	}

	/* the write reports only a failure; the read after it tells when it has landed */
	if ((ret = rpma_write(conn, remote_mr, offset, src_mr, 0, sizeof(message),
			RPMA_F_COMPLETION_ON_ERROR, NULL))) {
		example_fail(SIDE, "rpma_write", ret);
		goto err_mr_remote_delete;
	}
	example_say(SIDE, "wrote \"%s\" to the server's memory", src);

	if ((ret = rpma_read(conn, dst_mr, 0, remote_mr, offset, sizeof(message),
			RPMA_F_COMPLETION_ALWAYS, NULL))) {
		example_fail(SIDE, "rpma_read", ret);
		goto err_mr_remote_delete;
	}
	struct ibv_wc wc;
	if (example_wait_completion(SIDE, cq, &wc))
		goto err_mr_remote_delete;
	if (wc.opcode != IBV_WC_RDMA_READ) {
		example_say(SIDE, "ERROR: expected a read completion, got opcode %d", wc.opcode);
		goto err_mr_remote_delete;
	}
	example_say(SIDE, "read back \"%s\" from the server's memory", dst);
	if (memcmp(src, dst, sizeof(message)) != 0) {
		example_say(SIDE, "ERROR: what I read back differs from what I wrote");
		goto err_mr_remote_delete;
	}
	example_say(SIDE, "the read-back matches what I wrote");
	result = 0;

err_mr_remote_delete:
	(void) rpma_mr_remote_delete(&remote_mr);
err_disconnect:
	if (example_disconnect(SIDE, conn))
		result = -1;
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_dst_mr_dereg:
	if ((ret = rpma_mr_dereg(&dst_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg(dst)", ret);
err_src_mr_dereg:
	if ((ret = rpma_mr_dereg(&src_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg(src)", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
