/*
 * client.c -- the write-with-imm example, client side: writes a string into the server's
 * memory with rpma_write_with_imm; the immediate value tells the server what arrived (here,
 * the length of the string), and its receive completion tells it when.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

static const char message[] = "Written with an immediate value.";

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
	if (example_mr_reg(res, src, sizeof(message), RPMA_MR_USAGE_WRITE_SRC, NULL, &src_mr) ||
			example_connect(res, addr, port, NULL) ||
			example_get_remote(res, sizeof(message), &offset, NULL, false) ||
			example_get_cqs(res, &cq, NULL))
		return -1;

	uint32_t imm = (uint32_t)strlen(message);
	if ((ret = rpma_write_with_imm(res->conn, res->remote_mr, offset, src_mr, 0,
			     sizeof(message), RPMA_F_COMPLETION_ALWAYS, imm, NULL)))
		return example_fail(SIDE, "rpma_write_with_imm", ret);
	struct ibv_wc wc;
	if (example_next_expect(res, cq, IBV_WC_RDMA_WRITE, &wc))
		return -1;
	example_say(SIDE, "wrote \"%s\" (%zu bytes) to the server's memory with immediate %u",
			message, sizeof(message), imm);
	return 0;
}
