/*
 * server.c -- the messages-ping-pong example, server side: posts a receive before it accepts
 * the connection, then answers each of the client's ROUNDS messages with the received
 * counter plus one, posting the next receive before it answers.
 */
#include <inttypes.h>

#include "examples/common/example.h"
#include "examples/messages-ping-pong/ping_pong.h"

#define SIDE "server"

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	uint64_t *recv_buf = example_alloc(res, MSG_SIZE);
	uint64_t *send_buf = example_alloc(res, MSG_SIZE);
	if (recv_buf == NULL || send_buf == NULL ||
			example_mr_reg_msgs(res, recv_buf, send_buf, MSG_SIZE, &recv_mr, &send_mr))
		return -1;

	/* with a shared channel, the connection's completions are reported through it */
	if (ping_pong_shared_channel && example_conn_cfg_new(res, 0, true))
		return -1;

	/* the client's first message must find a receive posted: post it before accepting */
	if (example_listen(res, addr, port) ||
			example_accept_with_recvs(res, recv_mr, MSG_SIZE, 1, NULL) ||
			example_get_cqs(res, &cq, NULL))
		return -1;

	/* sends and receives complete on the same CQ, in whatever order they happen */
	int send_pending = 0;
	for (int round = 1; round <= ROUNDS; round++) {
		int received = 0;
		while (!received || send_pending) {
			if (example_next(res, cq, &wc))
				return -1;
			if (wc.opcode == IBV_WC_SEND) {
				send_pending = 0;
			} else if (wc.opcode == IBV_WC_RECV && wc.byte_len == MSG_SIZE) {
				received = 1;
			} else {
				example_say(SIDE,
						"ERROR: unexpected completion: opcode %d, %u bytes",
						wc.opcode, wc.byte_len);
				return -1;
			}
		}
		uint64_t counter = *recv_buf;
		example_say(SIDE, "message %d: received %" PRIu64 ", sending back %" PRIu64, round,
				counter, counter + 1);

		if (round < ROUNDS && (ret = rpma_recv(res->conn, recv_mr, 0, MSG_SIZE, NULL)))
			return example_fail(SIDE, "rpma_recv", ret);
		*send_buf = counter + 1;
		if ((ret = rpma_send(res->conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				     NULL)))
			return example_fail(SIDE, "rpma_send", ret);
		send_pending = 1;
	}
	if (example_next_expect(res, cq, IBV_WC_SEND, &wc))
		return -1;
	example_say(SIDE, "answered all %d messages", ROUNDS);
	return example_wait_for_disconnect(SIDE, res->conn);
}
