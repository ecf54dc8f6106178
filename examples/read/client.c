/*
 * client.c -- the read example, client side: gets the descriptor of the server's memory from
 * the connection's private data and reads that memory with rpma_read into a local buffer.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"
#define BUFFER_SIZE 64

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *dst_mr = NULL;
	struct rpma_cq *cq = NULL;
	size_t offset = 0, size = 0;
	int ret;

	/* the local buffer the read lands in */
	char *buffer = example_alloc(res, BUFFER_SIZE);
	if (buffer == NULL ||
			example_mr_reg(res, buffer, BUFFER_SIZE, RPMA_MR_USAGE_READ_DST, NULL,
					&dst_mr))
		return -1;

	if (example_connect(res, addr, port, NULL) ||
			example_get_remote(res, 0, &offset, &size, false))
		return -1;
	example_say(SIDE, "the server's memory region has %zu bytes", size);
	size_t len = size - offset;
	if (len > BUFFER_SIZE - 1)
		len = BUFFER_SIZE - 1; /* keep a terminating zero of our own */

	if ((ret = rpma_read(res->conn, dst_mr, 0, res->remote_mr, offset, len,
			     RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(SIDE, "rpma_read", ret);
	example_say(SIDE, "reading %zu bytes from the server's memory", len);

	struct ibv_wc wc;
	if (example_get_cqs(res, &cq, NULL) || example_next_expect(res, cq, IBV_WC_RDMA_READ, &wc))
		return -1;
	example_say(SIDE, "read \"%s\" from the server's memory", buffer);
	return 0;
}
