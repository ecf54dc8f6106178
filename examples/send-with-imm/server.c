/*
 * server.c -- the send-with-imm example, server side: posts two receives before accepting,
 * then prints both of the client's messages: for each, the immediate value that came with
 * it (in network byte order in the completion, hence ntohl), its length, and its bytes.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define MESSAGES 2
#define MSG_SIZE 64

static char recv_slots[MESSAGES][MSG_SIZE];

int
example_server(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *recv_mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer))
		return -1;
	memset(recv_slots, 0, sizeof(recv_slots));
	if ((ret = rpma_mr_reg(peer, recv_slots, sizeof(recv_slots), RPMA_MR_USAGE_RECV,
			&recv_mr))) {
		example_fail(SIDE, "rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		example_fail(SIDE, "rpma_ep_listen", ret);
		goto err_mr_dereg;
	}
	example_say(SIDE, "listening on %s:%s", addr, port);
	example_server_listening();

	if ((ret = rpma_ep_next_conn_req(ep, NULL, &req))) {
		example_fail(SIDE, "rpma_ep_next_conn_req", ret);
		goto err_ep_shutdown;
	}
	/* one receive per message; the completion's wr_id says which buffer got filled */
	for (uintptr_t slot = 0; slot < MESSAGES; slot++) {
		if ((ret = rpma_conn_req_recv(req, recv_mr, slot * MSG_SIZE, MSG_SIZE,
				(const void *)slot))) {
			example_fail(SIDE, "rpma_conn_req_recv", ret);
			(void) rpma_conn_req_delete(&req);
			goto err_ep_shutdown;
		}
	}
	if (example_conn_req_connect(SIDE, &req, NULL, &conn))
		goto err_ep_shutdown;
	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_conn_delete;
	}

	for (int i = 1; i <= MESSAGES; i++) {
		struct ibv_wc wc;
		if (example_next_completion(SIDE, cq, &wc))
			goto err_conn_delete;
		if (wc.opcode != IBV_WC_RECV || wc.wr_id >= MESSAGES) {
			example_say(SIDE, "ERROR: unexpected completion: opcode %d", wc.opcode);
			goto err_conn_delete;
		}
		if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
			example_say(SIDE, "ERROR: message %d came without an immediate value", i);
			goto err_conn_delete;
		}
		uint32_t imm = ntohl(wc.imm_data);
		const char *msg = recv_slots[wc.wr_id];
		if (wc.byte_len == 0)
			example_say(SIDE, "message %d: immediate 0x%08x and 0 bytes: the immediate "
				"is all there is", i, imm);
		else
			example_say(SIDE, "message %d: immediate 0x%08x and %u bytes: \"%.*s\"", i,
				imm, wc.byte_len, (int)strnlen(msg, wc.byte_len), msg);
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
err_mr_dereg:
	if ((ret = rpma_mr_dereg(&recv_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
