/*
 * server.c -- the messages-ping-pong example, server side: posts a receive before it accepts
 * the connection, then answers each of the client's ROUNDS messages with the received
 * counter plus one, posting the next receive before it answers.
 */
#include <inttypes.h>
#include <string.h>

#include "examples/common/example.h"
#include "examples/messages-ping-pong/ping_pong.h"

#define SIDE "server"
#define ROUNDS 5
#define MSG_SIZE sizeof(uint64_t)

static uint64_t recv_buf, send_buf;

int
ping_pong_server(const char *addr, const char *port, bool shared_channel)
{
	struct example_res res;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL;
	int ret, result = -1;

	if (example_begin(&res, SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL) ||
			example_mr_reg(&res, &recv_buf, MSG_SIZE, RPMA_MR_USAGE_RECV, "recv",
				&recv_mr) ||
			example_mr_reg(&res, &send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, "send",
				&send_mr))
		goto out;

	/* with a shared channel, the connection's completions are reported through it */
	if (shared_channel && example_conn_cfg_new(&res, 0, true))
		goto out;
	if (example_listen(&res, addr, port))
		goto out;

	/* the client's first message must find a receive posted: post it before accepting */
	if (example_accept_with_recvs(&res, recv_mr, MSG_SIZE, 1, NULL) ||
			example_get_cqs(&res, &cq, NULL))
		goto out;

	/* sends and receives complete on the same CQ, in whatever order they happen */
	int send_pending = 0;
	for (int round = 1; round <= ROUNDS; round++) {
		int received = 0;
		while (!received || send_pending) {
			struct ibv_wc wc;
			if (example_next(&res, cq, &wc))
				goto out;
			if (wc.opcode == IBV_WC_SEND) {
				send_pending = 0;
			} else if (wc.opcode == IBV_WC_RECV && wc.byte_len == MSG_SIZE) {
				received = 1;
			} else {
				example_say(SIDE, "ERROR: unexpected completion: opcode %d, %u bytes",
					wc.opcode, wc.byte_len);
				goto out;
			}
		}
		uint64_t counter = recv_buf;
		example_say(SIDE, "message %d: received %" PRIu64 ", sending back %" PRIu64,
			round, counter, counter + 1);

		if (round < ROUNDS &&
				(ret = rpma_recv(res.conn, recv_mr, 0, MSG_SIZE, NULL))) {
			example_fail(SIDE, "rpma_recv", ret);
			goto out;
		}
		send_buf = counter + 1;
		if ((ret = rpma_send(res.conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				NULL))) {
			example_fail(SIDE, "rpma_send", ret);
			goto out;
		}
		send_pending = 1;
	}
	struct ibv_wc wc;
	if (example_next(&res, cq, &wc))
		goto out;
	if (wc.opcode != IBV_WC_SEND) {
		example_say(SIDE, "ERROR: unexpected completion: opcode %d", wc.opcode);
		goto out;
	}
	example_say(SIDE, "answered all %d messages", ROUNDS);

	if (example_wait_for_disconnect(SIDE, res.conn))
		goto out;
	result = 0;
out:
	return example_end(&res, result);
}
