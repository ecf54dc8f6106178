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

/* answers one client's ROUNDS messages, received in recv_slots and sent from send_buf */
static int
serve_client(struct example_res *res, int number, struct rpma_cq *rcq, const uint64_t *recv_slots,
		struct rpma_mr_local *recv_mr, uint64_t *send_buf, struct rpma_mr_local *send_mr)
{
	struct rpma_cq *cq = NULL;
	uint32_t qp_num = 0;
	struct ibv_wc wc;
	int ret;

	if (example_get_cqs(res, &cq, NULL))
		return -1;
	if ((ret = rpma_conn_get_qp_num(res->conn, &qp_num)))
		return example_fail(SIDE, "rpma_conn_get_qp_num", ret);

	for (int round = 1; round <= ROUNDS; round++) {
		/* the message arrives in one of the SRQ's buffers, reported on the SRQ's CQ */
		if (example_next_completion(SIDE, rcq, &wc))
			return -1;
		if (wc.opcode != IBV_WC_RECV || wc.byte_len != MSG_SIZE || wc.wr_id >= RECV_SLOTS) {
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
		example_say(SIDE,
				"client %d, message %d: received %" PRIu64
				" (SRQ buffer %zu), sending back %" PRIu64,
				number, round, counter, slot, counter + 1);

		/* the buffer is free again: give it back to the SRQ */
		if ((ret = rpma_srq_recv(res->srq, recv_mr, slot * MSG_SIZE, MSG_SIZE,
				     (const void *)slot)))
			return example_fail(SIDE, "rpma_srq_recv", ret);

		*send_buf = counter + 1;
		if ((ret = rpma_send(res->conn, send_mr, 0, MSG_SIZE, RPMA_F_COMPLETION_ALWAYS,
				     NULL)))
			return example_fail(SIDE, "rpma_send", ret);
		if (example_next_expect(res, cq, IBV_WC_SEND, &wc))
			return -1;
	}
	return 0;
}

/* creates res->srq with a receive CQ of its own (*rcq_ptr) and posts every receive slot */
static int
make_srq(struct example_res *res, struct rpma_mr_local *recv_mr, struct rpma_cq **rcq_ptr)
{
	struct rpma_srq_cfg *srq_cfg = NULL;
	int ret = rpma_srq_cfg_new(&srq_cfg);
	if (ret)
		return example_fail(SIDE, "rpma_srq_cfg_new", ret);
	if ((ret = rpma_srq_cfg_set_rcq_size(srq_cfg, 10)))
		example_fail(SIDE, "rpma_srq_cfg_set_rcq_size", ret);
	else if ((ret = rpma_srq_new(res->peer, srq_cfg, &res->srq)))
		example_fail(SIDE, "rpma_srq_new", ret);
	int ret2 = rpma_srq_cfg_delete(&srq_cfg);
	if (ret2)
		example_fail(SIDE, "rpma_srq_cfg_delete", ret2);
	if (ret || ret2)
		return -1;

	if ((ret = rpma_srq_get_rcq(res->srq, rcq_ptr)) || *rcq_ptr == NULL)
		return example_fail(SIDE, "rpma_srq_get_rcq", ret);
	for (size_t slot = 0; slot < RECV_SLOTS; slot++) {
		if ((ret = rpma_srq_recv(res->srq, recv_mr, slot * MSG_SIZE, MSG_SIZE,
				     (const void *)slot)))
			return example_fail(SIDE, "rpma_srq_recv", ret);
	}
	example_say(SIDE, "posted %d receive buffers to the shared receive queue", RECV_SLOTS);
	return 0;
}

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *recv_mr = NULL, *send_mr = NULL;
	struct rpma_cq *rcq = NULL;
	int ret;

	/* RECV_SLOTS receive buffers of MSG_SIZE bytes each, one after another */
	uint64_t *recv_slots = example_alloc(res, RECV_SLOTS * MSG_SIZE);
	uint64_t *send_buf = example_alloc(res, MSG_SIZE);
	if (recv_slots == NULL || send_buf == NULL ||
			example_mr_reg(res, recv_slots, RECV_SLOTS * MSG_SIZE, RPMA_MR_USAGE_RECV,
					"recv", &recv_mr) ||
			example_mr_reg(res, send_buf, MSG_SIZE, RPMA_MR_USAGE_SEND, "send",
					&send_mr))
		return -1;

	/* the shared receive queue, with a receive CQ of its own */
	if (make_srq(res, recv_mr, &rcq))
		return -1;

	/* every connection made with this configuration receives through the SRQ */
	if (example_conn_cfg_new(res, 0, false))
		return -1;
	if ((ret = rpma_conn_cfg_set_srq(res->cfg, res->srq)))
		return example_fail(SIDE, "rpma_conn_cfg_set_srq", ret);
	if (example_listen(res, addr, port))
		return -1;

	for (int number = 1; number <= CLIENTS; number++) {
		if (example_accept(res, NULL))
			return -1;
		example_say(SIDE, "client %d connected", number);
		if (serve_client(res, number, rcq, recv_slots, recv_mr, send_buf, send_mr))
			return -1;
		example_say(SIDE, "client %d: answered all %d messages", number, ROUNDS);
		if (example_wait_for_disconnect(SIDE, res->conn) || example_conn_close(res, 0))
			return -1;
	}
	example_say(SIDE, "served %d clients through one shared receive queue", CLIENTS);
	return 0;
}
