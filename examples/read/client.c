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
	struct example_res res;
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_cq *cq = NULL;
	char buffer[64];
	size_t offset = 0, size = 0;
	int ret, result = -1;

	if (example_begin(&res, SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE))
		goto out;

	/* the local buffer the read lands in */
	memset(buffer, 0, sizeof(buffer));
	if (example_mr_reg(&res, buffer, sizeof(buffer), RPMA_MR_USAGE_READ_DST, NULL, &dst_mr))
		goto out;

	if (example_connect(&res, addr, port, NULL) ||
			example_get_remote(&res, 0, &offset, &size, false))
		goto out;
	example_say(SIDE, "the server's memory region has %zu bytes", size);
	size_t len = size - offset;
	if (len > sizeof(buffer) - 1)
		len = sizeof(buffer) - 1; /* keep a terminating zero of our own */

	if ((ret = rpma_read(res.conn, dst_mr, 0, res.remote_mr, offset, len,
			RPMA_F_COMPLETION_ALWAYS, NULL))) {
		example_fail(SIDE, "rpma_read", ret);
		goto out;
	}
	example_say(SIDE, "reading %zu bytes from the server's memory", len);

	struct ibv_wc wc;
	if (example_get_cqs(&res, &cq, NULL) || example_wait_completion(SIDE, cq, &wc))
		goto out;
	if (wc.opcode != IBV_WC_RDMA_READ) {
		example_say(SIDE, "ERROR: expected a read completion, got opcode %d", wc.opcode);
		goto out;
	}
	example_say(SIDE, "read \"%s\" from the server's memory", buffer);
	result = 0;
out:
	return example_end(&res, result);
}
