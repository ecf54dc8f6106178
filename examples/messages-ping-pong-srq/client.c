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

static uint64_t recv_buf, send_buf;

/* one client's connection and ROUNDS round trips */
static int
ping_pong(int number, struct rpma_peer *peer, const char *addr, const char *port,
		struct rpma_mr_local *recv_mr, struct rpma_mr_local *send_mr)
{
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	example_say(SIDE, "client %d: connecting to %s:%s", number, addr, port);
	if (example_client_connect(SIDE, peer, addr, port, NULL, NULL, &conn))
		return -1;
	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_disconnect;
	}

	uint64_t counter = (uint64_t)number * 100;
	for (int round = 1; round <= ROUNDS; round++) {
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, NULL))) {
			example_fail(SIDE, "rpma_recv", ret);
			goto err_disconnect;
		}
		send_buf = counter;
		example_say(SIDE, "client %d, message %d: sending %" PRIu64, number, round,
			counter);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				NULL))) {
			example_fail(SIDE, "rpma_send", ret);
			goto err_disconnect;
		}
		/* the send's and the answer's completions, in either order */
		int sent = 0, received = 0;
		while (!sent || !received) {
			struct ibv_wc wc;
			if (example_next_completion(SIDE, cq, &wc))
				goto err_disconnect;
			if (wc.opcode == IBV_WC_SEND) {
				sent = 1;
			} else if (wc.opcode == IBV_WC_RECV && wc.byte_len == MSG_SIZE) {
				received = 1;
			} else {
				example_say(SIDE, "ERROR: unexpected completion: opcode %d, %u bytes",
					wc.opcode, wc.byte_len);
				goto err_disconnect;
			}
		}
		example_say(SIDE, "client %d, message %d: received %" PRIu64, number, round,
			recv_buf);
		counter = recv_buf + 1;
	}
	example_say(SIDE, "client %d: %d round trips done, my counter is %" PRIu64, number,
		ROUNDS, counter);
	result = 0;

err_disconnect:
	if (example_disconnect(SIDE, conn))
		result = -1;
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
	return result;
}

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer))
		return -1;
	if ((ret = rpma_mr_reg(peer, &recv_buf, MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr))) {
		example_fail(SIDE, "rpma_mr_reg(recv)", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, &send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, &send_mr))) {
		example_fail(SIDE, "rpma_mr_reg(send)", ret);
		goto err_mr_dereg;
	}

	result = 0;
	for (int number = 1; number <= CLIENTS && result == 0; number++)
		result = ping_pong(number, peer, addr, port, recv_mr, send_mr);

err_mr_dereg:
	if ((ret = rpma_mr_dereg(&send_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg(send)", ret);
	if ((ret = rpma_mr_dereg(&recv_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg(recv)", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
