/*
 * client.c -- the messages-ping-pong-srq example, client side: plays two clients, one after
 * the other. Each connects, sends a counter (client 1 starts at 100, client 2 at 200),
 * receives the server's answer (the counter plus one), adds one and sends that, ROUNDS
 * times, then disconnects. The client side needs no SRQ: it receives on its connection.
 */
#include <inttypes.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"
#define CLIENTS 2
#define ROUNDS 5
#define MSG_SIZE sizeof(uint64_t)

/* one client's connection and ROUNDS round trips, through recv_buf and send_buf */
static int
ping_pong(struct example_res *res, int number, const char *addr, const char *port,
		uint64_t *recv_buf, struct rpma_mr_local *recv_mr, uint64_t *send_buf,
		struct rpma_mr_local *send_mr)
{
	struct rpma_cq *cq = NULL;

	example_say(SIDE, "client %d:", number);
	if (example_connect(res, addr, port, NULL) || example_get_cqs(res, &cq, NULL))
		return -1;

	uint64_t counter = (uint64_t)number * 100;
	for (int round = 1; round <= ROUNDS; round++) {
		*send_buf = counter;
		example_say(SIDE, "client %d, message %d: sending %" PRIu64, number, round,
				counter);
		/* the receive for the answer is posted before the send */
		if (example_send_and_recv(res, cq, send_mr, recv_mr, MSG_SIZE))
			return -1;
		example_say(SIDE, "client %d, message %d: received %" PRIu64, number, round,
				*recv_buf);
		counter = *recv_buf + 1;
	}
	example_say(SIDE, "client %d: %d round trips done, my counter is %" PRIu64, number, ROUNDS,
			counter);
	/* this client leaves; after a failure the frame's example_end() closes the connection */
	return example_conn_close(res, 0);
}

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;

	uint64_t *recv_buf = example_alloc(res, MSG_SIZE);
	uint64_t *send_buf = example_alloc(res, MSG_SIZE);
	if (recv_buf == NULL || send_buf == NULL ||
			example_mr_reg(res, recv_buf, MSG_SIZE, RPMA_MR_USAGE_RECV, "recv",
					&recv_mr) ||
			example_mr_reg(res, send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, "send",
					&send_mr))
		return -1;
	for (int number = 1; number <= CLIENTS; number++) {
		if (ping_pong(res, number, addr, port, recv_buf, recv_mr, send_buf, send_mr))
			return -1;
	}
	return 0;
}
