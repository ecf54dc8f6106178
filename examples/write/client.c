/*
 * client.c -- the write example, client side: writes a string into the server's memory with
 * rpma_write, then reads it back with rpma_read and compares-> On one connection a read
 * completes only after every earlier write has been placed, so the read-back sees the write
 * and proves it reached the server's memory.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"
#define BUFFER_SIZE 64

static const char message[] = "Written by the client with rpma_write.";

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *src_mr = NULL, *dst_mr = NULL;
	struct rpma_cq *cq = NULL;
	size_t offset = 0;
	int ret;

	/* src: what the client writes; dst: where the read-back lands */
	char *src = example_alloc(res, BUFFER_SIZE);
	char *dst = example_alloc(res, BUFFER_SIZE);
	if (src == NULL || dst == NULL)
		return -1;
	memcpy(src, message, sizeof(message));
	if (example_mr_reg(res, src, BUFFER_SIZE, RPMA_MR_USAGE_WRITE_SRC, "src", &src_mr) ||
			example_mr_reg(res, dst, BUFFER_SIZE, RPMA_MR_USAGE_READ_DST, "dst",
					&dst_mr))
		return -1;

	if (example_connect(res, addr, port, NULL) ||
			example_get_remote(res, sizeof(message), &offset, NULL, false) ||
			example_get_cqs(res, &cq, NULL))
		return -1;

	/* the write reports only a failure; the read after it tells when it has landed */
	if ((ret = rpma_write(res->conn, res->remote_mr, offset, src_mr, 0, sizeof(message),
			     RPMA_F_COMPLETION_ON_ERROR, NULL)))
		return example_fail(SIDE, "rpma_write", ret);
	example_say(SIDE, "wrote \"%s\" to the server's memory", src);

	if ((ret = rpma_read(res->conn, dst_mr, 0, res->remote_mr, offset, sizeof(message),
			     RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(SIDE, "rpma_read", ret);
	struct ibv_wc wc;
	if (example_next_expect(res, cq, IBV_WC_RDMA_READ, &wc))
		return -1;
	example_say(SIDE, "read back \"%s\" from the server's memory", dst);
	if (memcmp(src, dst, sizeof(message)) != 0) {
		example_say(SIDE, "ERROR: what I read back differs from what I wrote");
		return -1;
	}
	example_say(SIDE, "the read-back matches what I wrote");
	return 0;
}
