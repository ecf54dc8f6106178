/*
 * client.c -- the messages-ping-pong example, client side: sends a counter, receives the
 * server's answer (the counter plus one), adds one and sends that, ROUNDS times. Before each
 * send it posts the receive for the answer. On a shared completion channel it first shows
 * that rpma_cq_wait refuses its CQ.
 */
#include <inttypes.h>

#include "examples/common/example.h"
#include "examples/messages-ping-pong/ping_pong.h"

#define SIDE "client"

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *cq = NULL;

	uint64_t *recv_buf = example_alloc(res, MSG_SIZE);
	uint64_t *send_buf = example_alloc(res, MSG_SIZE);
	if (recv_buf == NULL || send_buf == NULL ||
			example_mr_reg_msgs(res, recv_buf, send_buf, MSG_SIZE, &recv_mr, &send_mr))
		return -1;

	/* with a shared channel, the connection's completions are reported through it */
	if (ping_pong_shared_channel && example_conn_cfg_new(res, 0, true))
		return -1;
	if (example_connect(res, addr, port, NULL) || example_get_cqs(res, &cq, NULL))
		return -1;

	/* a CQ on a shared channel cannot be waited for by itself */
	if (ping_pong_shared_channel && example_expect_shared_channel(res, cq))
		return -1;

	uint64_t counter = 0;
	for (int round = 1; round <= ROUNDS; round++) {
		*send_buf = counter;
		example_say(SIDE, "message %d: sending %" PRIu64, round, counter);
		/* the receive for the answer is posted before the send */
		if (example_send_and_recv(res, cq, send_mr, recv_mr, MSG_SIZE))
			return -1;
		example_say(SIDE, "message %d: received %" PRIu64, round, *recv_buf);
		counter = *recv_buf + 1;
	}
	example_say(SIDE, "%d round trips done, my counter is %" PRIu64, ROUNDS, counter);
	return 0;
}
