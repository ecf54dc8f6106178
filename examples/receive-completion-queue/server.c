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

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL, *rcq = NULL;
	struct ibv_wc wc;
	int ret;

	/* a separate receive CQ for the connection (sharing a channel with the main CQ or not) */
	char *recv_buf = example_alloc(res, MSG_SIZE);
	char *send_buf = example_alloc(res, MSG_SIZE);
	if (recv_buf == NULL || send_buf == NULL ||
			example_mr_reg_msgs(
					res, recv_buf, send_buf, MSG_SIZE, &recv_mr, &send_mr) ||
			example_conn_cfg_new(res, RCQ_SIZE, rcq_shared_channel) ||
			example_listen(res, addr, port) ||
			example_accept_with_recvs(res, recv_mr, MSG_SIZE, 1, NULL) ||
			example_get_cqs(res, &cq, &rcq))
		return -1;

	for (int round = 1; round <= ROUNDS; round++) {
		if (example_next_expect(res, rcq, IBV_WC_RECV, &wc))
			return -1;
		example_say(SIDE, "received \"%.*s\" on the receive CQ",
				(int)strnlen(recv_buf, wc.byte_len), recv_buf);

		if (round < ROUNDS && (ret = rpma_recv(res->conn, recv_mr, 0, MSG_SIZE, NULL)))
			return example_fail(SIDE, "rpma_recv", ret);
		snprintf(send_buf, MSG_SIZE, "pong %d", round);
		if ((ret = rpma_send(res->conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				     NULL)))
			return example_fail(SIDE, "rpma_send", ret);
		if (example_next_expect(res, cq, IBV_WC_SEND, &wc))
			return -1;
		example_say(SIDE, "sent \"%s\": its completion came on the main CQ", send_buf);
	}
	return example_wait_for_disconnect(SIDE, res->conn);
}
