/*
 * server.c -- the receive-completion-queue example, server side: its connection has a
 * receive CQ (rcq_size > 0), so receives complete there while sends complete on the main
 * CQ. It answers each of the client's ROUNDS "ping N" with "pong N", waiting for each kind
 * of completion on its own CQ.
 */
#include <stdio.h>
#include <string.h>

#include "examples/common/example.h"
#include "examples/receive-completion-queue/rcq.h"

#define SIDE "server"
#define ROUNDS 3
#define MSG_SIZE 16
#define RCQ_SIZE 10

static char recv_buf[MSG_SIZE], send_buf[MSG_SIZE];

int
rcq_server(const char *addr, const char *port, bool shared_channel)
{
	struct example_res res;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	int ret, result = -1;

	if (example_begin(&res, SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL) ||
			example_mr_reg(&res, recv_buf, MSG_SIZE, RPMA_MR_USAGE_RECV, "recv",
				&recv_mr) ||
			example_mr_reg(&res, send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, "send",
				&send_mr))
		goto out;

	/* a separate receive CQ for the connection (sharing a channel with the main CQ or not) */
	if (example_conn_cfg_new(&res, RCQ_SIZE, shared_channel) ||
			example_listen(&res, addr, port) ||
			example_accept_with_recvs(&res, recv_mr, MSG_SIZE, 1, NULL) ||
			example_get_cqs(&res, &cq, &rcq))
		goto out;

	for (int round = 1; round <= ROUNDS; round++) {
		struct ibv_wc wc;
		if (example_next(&res, rcq, &wc))
			goto out;
		if (wc.opcode != IBV_WC_RECV) {
			example_say(SIDE, "ERROR: the receive CQ reported opcode %d", wc.opcode);
			goto out;
		}
		example_say(SIDE, "received \"%.*s\" on the receive CQ",
			(int)strnlen(recv_buf, wc.byte_len), recv_buf);

		if (round < ROUNDS && (ret = rpma_recv(res.conn, recv_mr, 0, MSG_SIZE, NULL))) {
			example_fail(SIDE, "rpma_recv", ret);
			goto out;
		}
		snprintf(send_buf, MSG_SIZE, "pong %d", round);
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
	}

	if (example_wait_for_disconnect(SIDE, res.conn))
		goto out;
	result = 0;
out:
	return example_end(&res, result);
}
