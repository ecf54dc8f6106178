/*
 * client.c -- the send-with-imm example, client side: sends a message together with a 32-bit
 * immediate value (rpma_send_with_imm), then a message of 0 bytes (no buffer at all) that
 * carries only an immediate value.
 */
#include <stdint.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

static const char message[] = "A message with an immediate value.";

#define IMM_WITH_DATA 0xc0ffee00u
#define IMM_ALONE 0x0000beefu

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *send_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	/* the message is sent from a copy in memory of its own */
	char *send_buf = example_alloc(res, sizeof(message));
	if (send_buf == NULL)
		return -1;
	memcpy(send_buf, message, sizeof(message));
	if (example_mr_reg(res, send_buf, sizeof(message), RPMA_MR_USAGE_SEND, NULL, &send_mr) ||
			example_connect(res, addr, port, NULL) || example_get_cqs(res, &cq, NULL))
		return -1;

	example_say(SIDE, "sending \"%s\" (%zu bytes) with immediate 0x%08x", message,
			strlen(message), IMM_WITH_DATA);
	if ((ret = rpma_send_with_imm(res->conn, send_mr, 0, strlen(message),
			     RPMA_F_COMPLETION_ALWAYS, IMM_WITH_DATA, NULL)))
		return example_fail(SIDE, "rpma_send_with_imm", ret);
	if (example_wait_completion(SIDE, cq, &wc))
		return -1;

	example_say(SIDE, "sending 0 bytes with immediate 0x%08x", IMM_ALONE);
	if ((ret = rpma_send_with_imm(
			     res->conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, IMM_ALONE, NULL)))
		return example_fail(SIDE, "rpma_send_with_imm", ret);
	if (example_wait_completion(SIDE, cq, &wc))
		return -1;
	example_say(SIDE, "both sends completed");
	return 0;
}
