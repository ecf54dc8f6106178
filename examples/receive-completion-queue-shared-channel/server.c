/*
 * server.c -- the receive-completion-queue-shared-channel example, server side: as in
 * receive-completion-queue, receives complete on the connection's receive CQ and sends on
 * its main CQ, but both CQs share one completion channel. rpma_cq_wait does not work on such
 * CQs; the server waits with rpma_conn_wait, which reports the CQ that fired. An event may
 * also come for a completion that was already taken (rpma_cq_get_wc then says
 * RPMA_E_NO_COMPLETION): the server just waits again.
 */
#include <stdio.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define ROUNDS 3
#define MSG_SIZE 16
#define RCQ_SIZE 10

static char recv_buf[MSG_SIZE], send_buf[MSG_SIZE];

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
	if ((ret = rpma_mr_reg(peer, recv_buf, MSG_SIZE, RPMA_MR_USAGE_RECV, &recv_mr))) {
		example_fail(SIDE, "rpma_mr_reg(recv)", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, &send_mr))) {
		example_fail(SIDE, "rpma_mr_reg(send)", ret);
		goto err_mr_dereg;
	}

	/* a separate receive CQ for the connection */
	if ((ret = rpma_conn_cfg_new(&cfg))) {
		example_fail(SIDE, "rpma_conn_cfg_new", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_conn_cfg_set_rcq_size(cfg, RCQ_SIZE))) {
		example_fail(SIDE, "rpma_conn_cfg_set_rcq_size", ret);
		goto err_cfg_delete;
	}
	/* one completion channel for both CQs: one fd to wait on */
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
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, MSG_SIZE, NULL))) {
		example_fail(SIDE, "rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_ep_shutdown;
	}
	if (example_conn_req_connect(SIDE, &req, NULL, &conn))
		goto err_ep_shutdown;

	struct rpma_cq *cq = NULL, *rcq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq)) || (ret = rpma_conn_get_rcq(conn, &rcq))) {
		example_fail(SIDE, "rpma_conn_get_cq/rcq", ret);
		goto err_conn_delete;
	}
	if (rcq == NULL) {
		example_say(SIDE, "ERROR: the connection has no receive CQ");
		goto err_conn_delete;
	}

	for (int round = 1; round <= ROUNDS; round++) {
		struct ibv_wc wc;
		if (example_next_completion_shared(SIDE, conn, rcq, &wc))
			goto err_conn_delete;
		if (wc.opcode != IBV_WC_RECV) {
			example_say(SIDE, "ERROR: the receive CQ reported opcode %d", wc.opcode);
			goto err_conn_delete;
		}
		example_say(SIDE, "received \"%.*s\" on the receive CQ",
			(int)strnlen(recv_buf, wc.byte_len), recv_buf);

		if (round < ROUNDS && (ret = rpma_recv(conn, recv_mr, 0, MSG_SIZE, NULL))) {
			example_fail(SIDE, "rpma_recv", ret);
			goto err_conn_delete;
		}
		snprintf(send_buf, MSG_SIZE, "pong %d", round);
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				NULL))) {
			example_fail(SIDE, "rpma_send", ret);
			goto err_conn_delete;
		}
		if (example_next_completion_shared(SIDE, conn, cq, &wc))
			goto err_conn_delete;
		if (wc.opcode != IBV_WC_SEND) {
			example_say(SIDE, "ERROR: the main CQ reported opcode %d", wc.opcode);
			goto err_conn_delete;
		}
		example_say(SIDE, "sent \"%s\": its completion came on the main CQ", send_buf);
	}

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
