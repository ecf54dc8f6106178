/*
 * server.c -- the write-with-imm example, server side: exposes memory the client may write,
 * and posts a 1-byte receive before accepting. A write with immediate puts its data into the
 * memory and consumes that receive, leaving its buffer untouched: the receive's completion
 * (IBV_WC_RECV_RDMA_WITH_IMM) carries the immediate value and the number of bytes written,
 * which tells the server that the data is there.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define MEMORY_SIZE 64

static char memory[MEMORY_SIZE];
static char recv_byte = '-';

int
example_server(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL, *recv_mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer))
		return -1;
	memset(memory, 0, sizeof(memory));
	if ((ret = rpma_mr_reg(peer, memory, sizeof(memory), RPMA_MR_USAGE_WRITE_DST, &mr))) {
		example_fail(SIDE, "rpma_mr_reg(memory)", ret);
		goto err_peer_delete;
	}
	if ((ret = rpma_mr_reg(peer, &recv_byte, 1, RPMA_MR_USAGE_RECV, &recv_mr))) {
		example_fail(SIDE, "rpma_mr_reg(recv)", ret);
		goto err_mr_dereg;
	}

	struct example_common_data data;
	if (example_pack_descriptors(SIDE, mr, 0, NULL, &data))
		goto err_mr_dereg;
	struct rpma_conn_private_data pdata = {&data, sizeof(data)};

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
	/* the write with immediate needs a receive; 1 byte suffices, it will not be filled */
	if ((ret = rpma_conn_req_recv(req, recv_mr, 0, 1, NULL))) {
		example_fail(SIDE, "rpma_conn_req_recv", ret);
		(void) rpma_conn_req_delete(&req);
		goto err_ep_shutdown;
	}
	if (example_conn_req_connect(SIDE, &req, &pdata, &conn))
		goto err_ep_shutdown;
	example_say(SIDE, "sent the descriptor of my memory; posted a 1-byte receive");

	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_conn_delete;
	}
	if (example_wait_completion(SIDE, cq, &wc))
		goto err_conn_delete;
	if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
		example_say(SIDE, "ERROR: expected IBV_WC_RECV_RDMA_WITH_IMM, got opcode %d",
			wc.opcode);
		goto err_conn_delete;
	}
	example_say(SIDE, "got IBV_WC_RECV_RDMA_WITH_IMM: immediate %u, byte_len %u",
		ntohl(wc.imm_data), wc.byte_len);
	memory[MEMORY_SIZE - 1] = '\0';
	example_say(SIDE, "my memory now holds \"%s\"", memory);
	example_say(SIDE, "my 1-byte receive buffer still holds '%c'", recv_byte);

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
		result = example_fail(SIDE, "rpma_mr_dereg(recv)", ret);
	if ((ret = rpma_mr_dereg(&mr)))
		result = example_fail(SIDE, "rpma_mr_dereg(memory)", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
