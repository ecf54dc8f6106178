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
#define ROUNDS 3
#define MSG_SIZE 16
#define RCQ_SIZE 10

static char recv_buf[MSG_SIZE], send_buf[MSG_SIZE];

int
rcq_client(const char *addr, const char *port, bool shared_channel)
{
	struct example_res res;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	int ret, result = -1;

	if (example_begin(&res, SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE) ||
			example_mr_reg(&res, recv_buf, MSG_SIZE, RPMA_MR_USAGE_RECV, "recv",
				&recv_mr) ||
			example_mr_reg(&res, send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, "send",
				&send_mr) ||
			example_conn_cfg_new(&res, RCQ_SIZE, shared_channel) ||
			example_connect(&res, addr, port, NULL) || example_get_cqs(&res, &cq, &rcq))
		goto out;

	/* a CQ on a shared channel cannot be waited for by itself */
	if (shared_channel && example_expect_shared_channel(&res, cq))
		goto out;

	for (int round = 1; round <= ROUNDS; round++) {
		struct ibv_wc wc;
		if ((ret = rpma_recv(res.conn, recv_mr, 0, MSG_SIZE, NULL))) {
			example_fail(SIDE, "rpma_recv", ret);
			goto out;
		}
		snprintf(send_buf, MSG_SIZE, "ping %d", round);
		if ((ret = rpma_send(res.conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				NULL))) {
			example_fail(SIDE, "rpma_send", ret);
			goto out;
		}
		if (example_next(&res, cq, &wc))
			goto out;
		if (wc.opcode != IBV_WC_SEND) {
			example_say(SIDE, "ERROR: the main CQ reported opcode %d", wc.opcode);
			goto out;
		}
		example_say(SIDE, "sent \"%s\": its completion came on the main CQ", send_buf);

		if (example_next(&res, rcq, &wc))
			goto out;
		if (wc.opcode != IBV_WC_RECV) {
			example_say(SIDE, "ERROR: the receive CQ reported opcode %d", wc.opcode);
			goto out;
		}
		example_say(SIDE, "received \"%.*s\" on the receive CQ",
			(int)strnlen(recv_buf, wc.byte_len), recv_buf);
	}
	result = 0;
out:
	return example_end(&res, result);
}
