/*
 * client.c -- the receive-completion-queue example, client side: its connection has a
 * receive CQ too. It sends "ping N" and receives "pong N" ROUNDS times; the send completes on
 * the main CQ (rpma_conn_get_cq) and the receive on the receive CQ (rpma_conn_get_rcq), so
 * each is waited for on its own CQ. On a shared completion channel it first shows that
 * rpma_cq_wait refuses its CQ.
 */
#include <stdio.h>
#include <string.h>

#include "examples/common/example.h"
#include "examples/receive-completion-queue/rcq.h"

#define SIDE "client"

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	struct ibv_wc wc;
	int ret;

	char *recv_buf = example_alloc(res, MSG_SIZE);
	char *send_buf = example_alloc(res, MSG_SIZE);
	if (recv_buf == NULL || send_buf == NULL ||
			example_mr_reg_msgs(
					res, recv_buf, send_buf, MSG_SIZE, &recv_mr, &send_mr) ||
			example_conn_cfg_new(res, RCQ_SIZE, rcq_shared_channel) ||
			example_connect(res, addr, port, NULL) || example_get_cqs(res, &cq, &rcq))
		return -1;

	/* a CQ on a shared channel cannot be waited for by itself */
	if (rcq_shared_channel && example_expect_shared_channel(res, cq))
		return -1;

	for (int round = 1; round <= ROUNDS; round++) {
		if ((ret = rpma_recv(res->conn, recv_mr, 0, MSG_SIZE, NULL)))
			return example_fail(SIDE, "rpma_recv", ret);
		snprintf(send_buf, MSG_SIZE, "ping %d", round);
		if ((ret = rpma_send(res->conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				     NULL)))
			return example_fail(SIDE, "rpma_send", ret);
		if (example_next_expect(res, cq, IBV_WC_SEND, &wc))
			return -1;
		example_say(SIDE, "sent \"%s\": its completion came on the main CQ", send_buf);

		if (example_next_expect(res, rcq, IBV_WC_RECV, &wc))
			return -1;
		example_say(SIDE, "received \"%.*s\" on the receive CQ",
				(int)strnlen(recv_buf, wc.byte_len), recv_buf);
	}
	return 0;
}
