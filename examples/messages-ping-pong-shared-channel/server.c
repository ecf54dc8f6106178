/*
 * server.c -- the messages-ping-pong-shared-channel example, server side: the ping-pong of
 * messages-ping-pong on a connection whose CQ reports through a shared completion channel
 * (rpma_conn_cfg_set_compl_channel). rpma_cq_wait does not work then: the server waits with
 * rpma_conn_wait, and when an event brings no new completion (rpma_cq_get_wc says
 * RPMA_E_NO_COMPLETION) it simply waits again.
 */
#include <inttypes.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define ROUNDS 5
#define MSG_SIZE sizeof(uint64_t)

static uint64_t recv_buf, send_buf;

int
example_server(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer))
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

	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		example_fail(SIDE, "rpma_ep_listen", ret);
		goto err_cfg_delete;
	}
	example_say(SIDE, "listening on %s:%s", addr, port);
	example_server_listening();

	if ((ret = rpma_ep_next_conn_req(ep, cfg, &req))) {
		example_fail(SIDE, "rpma_ep_next_conn_req", ret);
		goto err_ep_shutdown;
	}
	/* the client's first message must find a receive posted: post it before accepting */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, MSG_SIZE, NULL))) {
		example_fail(SIDE, "rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_ep_shutdown;
	}
	if (example_conn_req_connect(SIDE, &req, NULL, &conn))
		goto err_ep_shutdown;

	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_conn_delete;
	}

	/* sends and receives complete on the same CQ, in whatever order they happen */
	int send_pending = 0;
	for (int round = 1; round <= ROUNDS; round++) {
		int received = 0;
		while (!received || send_pending) {
			struct ibv_wc wc;
			if (example_next_completion_shared(SIDE, conn, cq, &wc))
				goto err_conn_delete;
			if (wc.opcode == IBV_WC_SEND) {
				send_pending = 0;
			} else if (wc.opcode == IBV_WC_RECV && wc.byte_len == MSG_SIZE) {
				received = 1;
			} else {
				example_say(SIDE, "ERROR: unexpected completion: opcode %d, %u bytes",
					wc.opcode, wc.byte_len);
				goto err_conn_delete;
			}
		}
		uint64_t counter = recv_buf;
		example_say(SIDE, "message %d: received %" PRIu64 ", sending back %" PRIu64,
			round, counter, counter + 1);

		if (round < ROUNDS &&
				(ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, NULL))) {
			example_fail(SIDE, "rpma_recv", ret);
			goto err_conn_delete;
		}
		send_buf = counter + 1;
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				NULL))) {
			example_fail(SIDE, "rpma_send", ret);
			goto err_conn_delete;
		}
		send_pending = 1;
	}
	struct ibv_wc wc;
	if (example_next_completion_shared(SIDE, conn, cq, &wc))
		goto err_conn_delete;
	if (wc.opcode != IBV_WC_SEND) {
		example_say(SIDE, "ERROR: unexpected completion: opcode %d", wc.opcode);
		goto err_conn_delete;
	}
	example_say(SIDE, "answered all %d messages", ROUNDS);

	if (example_wait_for_disconnect(SIDE, conn))
		goto err_conn_delete;
	result = 0;

err_conn_delete:
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_ep_shutdown:
	if ((ret = rpma_ep_shutdown(&ep)))
		result = example_fail(SIDE, "rpma_ep_shutdown", ret);
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
