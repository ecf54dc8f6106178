/*
 * client.c -- the messages-ping-pong-shared-channel example, client side: the ping-pong of
 * messages-ping-pong on a connection with a shared completion channel, waiting for
 * completions with rpma_conn_wait instead of rpma_cq_wait.
 */
#include <inttypes.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"
#define ROUNDS 5
#define MSG_SIZE sizeof(uint64_t)

static uint64_t recv_buf, send_buf;

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_conn *conn = NULL;
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

	/* the connection's completions are reported through a shared completion channel */
	if ((ret = rpma_conn_cfg_new(&cfg))) {
		example_fail(SIDE, "rpma_conn_cfg_new", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_conn_cfg_set_compl_channel(cfg, true))) {
		example_fail(SIDE, "rpma_conn_cfg_set_compl_channel", ret);
		goto err_cfg_delete;
	}

	example_say(SIDE, "connecting to %s:%s", addr, port);
	if (example_client_connect(SIDE, peer, addr, port, cfg, NULL, &conn))
		goto err_cfg_delete;
	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_disconnect;
	}

	/* a CQ on a shared channel cannot be waited for by itself */
	ret = rpma_cq_wait(cq);
	if (ret != RPMA_E_SHARED_CHANNEL) {
		example_say(SIDE, "ERROR: rpma_cq_wait returned %d, not RPMA_E_SHARED_CHANNEL",
			ret);
		goto err_disconnect;
	}
	example_say(SIDE, "rpma_cq_wait refuses: \"%s\"; waiting with rpma_conn_wait instead",
		rpma_err_2str(ret));

	uint64_t counter = 0;
	for (int round = 1; round <= ROUNDS; round++) {
		if ((ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, NULL))) {
			example_fail(SIDE, "rpma_recv", ret);
			goto err_disconnect;
		}
		send_buf = counter;
		example_say(SIDE, "message %d: sending %" PRIu64, round, counter);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				NULL))) {
			example_fail(SIDE, "rpma_send", ret);
			goto err_disconnect;
		}

		/* the send's and the answer's completions, in either order */
		int sent = 0, received = 0;
		while (!sent || !received) {
			struct ibv_wc wc;
			if (example_next_completion_shared(SIDE, conn, cq, &wc))
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
		example_say(SIDE, "message %d: received %" PRIu64, round, recv_buf);
		counter = recv_buf + 1;
	}
	example_say(SIDE, "%d round trips done, my counter is %" PRIu64, ROUNDS, counter);
	result = 0;

err_disconnect:
	if (example_disconnect(SIDE, conn))
		result = -1;
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_cfg_delete:
	if ((ret = rpma_conn_cfg_delete(&cfg)))
		result = example_fail(SIDE, "rpma_conn_cfg_delete", ret);
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
