/*
 * server.c -- the messages-ping-pong-srq example, server side: the ping-pong of
 * messages-ping-pong, with CLIENTS clients one after another, over a shared receive queue
 * (SRQ). The receives are posted once to the SRQ, not to any connection; every connection
 * created with the SRQ in its configuration takes its messages from there, and the SRQ's own
 * receive CQ reports them (wc.qp_num tells which connection a message came in on). Sends
 * still complete on each connection's CQ.
 */
#include <inttypes.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define CLIENTS 2
#define ROUNDS 5
#define MSG_SIZE sizeof(uint64_t)
#define RECV_SLOTS 2 /* receive buffers kept posted to the SRQ */

static uint64_t recv_slots[RECV_SLOTS], send_buf;

/* answers one client's ROUNDS messages */
static int
serve_client(int number, struct rpma_conn *conn, struct rpma_srq *srq, struct rpma_cq *rcq,
		struct rpma_mr_local *recv_mr, struct rpma_mr_local *send_mr)
{
	struct rpma_cq *cq = NULL;
	uint32_t qp_num = 0;
	struct ibv_wc wc;
	int ret;

	if ((ret = rpma_conn_get_cq(conn, &cq)))
		return example_fail(SIDE, "rpma_conn_get_cq", ret);
	if ((ret = rpma_conn_get_qp_num(conn, &qp_num)))
		return example_fail(SIDE, "rpma_conn_get_qp_num", ret);

	for (int round = 1; round <= ROUNDS; round++) {
		/* the message arrives in one of the SRQ's buffers, reported on the SRQ's CQ */
		if (example_next_completion(SIDE, rcq, &wc))
			return -1;
		if (wc.opcode != IBV_WC_RECV || wc.byte_len != MSG_SIZE ||
				wc.wr_id >= RECV_SLOTS) {
			example_say(SIDE, "ERROR: unexpected completion: opcode %d, %u bytes",
				wc.opcode, wc.byte_len);
			return -1;
		}
		if (wc.qp_num != qp_num) {
			example_say(SIDE, "ERROR: a message for qp %u, client %d has qp %u",
				wc.qp_num, number, qp_num);
			return -1;
		}
		size_t slot = (size_t)wc.wr_id;
		uint64_t counter = recv_slots[slot];
		example_say(SIDE, "client %d, message %d: received %" PRIu64
			" (SRQ buffer %zu), sending back %" PRIu64, number, round, counter,
			slot, counter + 1);

		/* the buffer is free again: give it back to the SRQ */
		if ((ret = rpma_srq_recv(srq, recv_mr, slot * MSG_SIZE, MSG_SIZE,
				(const void *)slot)))
			return example_fail(SIDE, "rpma_srq_recv", ret);

		send_buf = counter + 1;
		if ((ret = rpma_send(conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				NULL)))
			return example_fail(SIDE, "rpma_send", ret);
		if (example_next_completion(SIDE, cq, &wc))
			return -1;
		if (wc.opcode != IBV_WC_SEND) {
			example_say(SIDE, "ERROR: unexpected completion: opcode %d", wc.opcode);
			return -1;
		}
	}
	return 0;
}

int
example_server(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_srq_cfg *srq_cfg = NULL;
	struct rpma_srq *srq = NULL;
	struct rpma_conn_cfg *cfg = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer))
		return -1;
	if ((ret = rpma_mr_reg(peer, recv_slots, sizeof(recv_slots), RPMA_MR_USAGE_RECV,
			&recv_mr))) {
		example_fail(SIDE, "rpma_mr_reg(recv)", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, &send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, &send_mr))) {
		example_fail(SIDE, "rpma_mr_reg(send)", ret);
		goto err_mr_dereg;
	}

	/* the shared receive queue, with a receive CQ of its own */
	if ((ret = rpma_srq_cfg_new(&srq_cfg))) {
		example_fail(SIDE, "rpma_srq_cfg_new", ret);
		goto err_mr_dereg;
	}
	if ((ret = rpma_srq_cfg_set_rcq_size(srq_cfg, 10))) {
		example_fail(SIDE, "rpma_srq_cfg_set_rcq_size", ret);
		goto err_srq_cfg_delete;
	}
	if ((ret = rpma_srq_new(peer, srq_cfg, &srq))) {
		example_fail(SIDE, "rpma_srq_new", ret);
		goto err_srq_cfg_delete;
	}
	struct rpma_cq *rcq = NULL;
	if ((ret = rpma_srq_get_rcq(srq, &rcq)) || rcq == NULL) {
		example_fail(SIDE, "rpma_srq_get_rcq", ret);
		goto err_srq_delete;
	}
	for (size_t slot = 0; slot < RECV_SLOTS; slot++) {
		if ((ret = rpma_srq_recv(srq, recv_mr, slot * MSG_SIZE, MSG_SIZE,
				(const void *)slot))) {
			example_fail(SIDE, "rpma_srq_recv", ret);
			goto err_srq_delete;
		}
	}
	example_say(SIDE, "posted %d receive buffers to the shared receive queue", RECV_SLOTS);

	/* every connection made with this configuration receives through the SRQ */
	if ((ret = rpma_conn_cfg_new(&cfg))) {
		example_fail(SIDE, "rpma_conn_cfg_new", ret);
		goto err_srq_delete;
	}
	if ((ret = rpma_conn_cfg_set_srq(cfg, srq))) {
		example_fail(SIDE, "rpma_conn_cfg_set_srq", ret);
		goto err_cfg_delete;
	}

	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		example_fail(SIDE, "rpma_ep_listen", ret);
		goto err_cfg_delete;
	}
	example_say(SIDE, "listening on %s:%s", addr, port);
	example_server_listening();

	for (int number = 1; number <= CLIENTS; number++) {
		if (example_server_accept(SIDE, ep, cfg, NULL, &conn))
			goto err_ep_shutdown;
		example_say(SIDE, "client %d connected", number);
		if (serve_client(number, conn, srq, rcq, recv_mr, send_mr))
			goto err_conn_delete;
		example_say(SIDE, "client %d: answered all %d messages", number, ROUNDS);
		if (example_wait_for_disconnect(SIDE, conn))
			goto err_conn_delete;
		if ((ret = rpma_conn_delete(&conn))) {
			example_fail(SIDE, "rpma_conn_delete", ret);
			goto err_ep_shutdown;
		}
	}
	example_say(SIDE, "served %d clients through one shared receive queue", CLIENTS);
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
err_srq_delete:
	if ((ret = rpma_srq_delete(&srq)))
		result = example_fail(SIDE, "rpma_srq_delete", ret);
err_srq_cfg_delete:
	if ((ret = rpma_srq_cfg_delete(&srq_cfg)))
		result = example_fail(SIDE, "rpma_srq_cfg_delete", ret);
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
