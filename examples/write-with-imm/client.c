/*
 * client.c -- the write-with-imm example, client side: writes a string into the server's
 * memory with rpma_write_with_imm; the immediate value tells the server what arrived (here,
 * the length of the string), and its receive completion tells it when.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

static char message[] = "Written with an immediate value.";

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct rpma_conn *conn = NULL;
	struct rpma_mr_remote *dst_mr = NULL;
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
	if (example_unpack_descriptors(SIDE, conn, &dst_mr, &offset, NULL))
		goto err_disconnect;
	if ((ret = rpma_mr_remote_get_size(dst_mr, &size))) {
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

	uint32_t imm = (uint32_t)strlen(message);
	if ((ret = rpma_write_with_imm(conn, dst_mr, offset, src_mr, 0, sizeof(message),
			RPMA_F_COMPLETION_ALWAYS, imm, NULL))) {
		example_fail(SIDE, "rpma_write_with_imm", ret);
		goto err_mr_remote_delete;
	}
	struct ibv_wc wc;
	if (example_wait_completion(SIDE, cq, &wc))
		goto err_mr_remote_delete;
	if (wc.opcode != IBV_WC_RDMA_WRITE) {
		example_say(SIDE, "ERROR: expected a write completion, got opcode %d", wc.opcode);
		goto err_mr_remote_delete;
	}
	example_say(SIDE, "wrote \"%s\" (%zu bytes) to the server's memory with immediate %u",
		message, sizeof(message), imm);
	result = 0;

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
