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

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *recv_mr = NULL;
	struct rpma_cq *cq = NULL;

	/* MESSAGES receive buffers of MSG_SIZE bytes each, one after another */
	char *recv_slots = example_alloc(res, MESSAGES * MSG_SIZE);
	if (recv_slots == NULL ||
			example_mr_reg(res, recv_slots, MESSAGES * MSG_SIZE, RPMA_MR_USAGE_RECV,
					NULL, &recv_mr) ||
			example_listen(res, addr, port))
		return -1;

	/* one receive per message; the completion's wr_id says which buffer got filled */
	if (example_accept_with_recvs(res, recv_mr, MSG_SIZE, MESSAGES, NULL) ||
			example_get_cqs(res, &cq, NULL))
		return -1;

	for (int i = 1; i <= MESSAGES; i++) {
		struct ibv_wc wc;
		if (example_next_completion(SIDE, cq, &wc))
			return -1;
		if (wc.opcode != IBV_WC_RECV || wc.wr_id >= MESSAGES) {
			example_say(SIDE, "ERROR: unexpected completion: opcode %d", wc.opcode);
			return -1;
		}
		if (!(wc.wc_flags & IBV_WC_WITH_IMM)) {
			example_say(SIDE, "ERROR: message %d came without an immediate value", i);
			return -1;
		}
		uint32_t imm = ntohl(wc.imm_data);
		const char *msg = &recv_slots[wc.wr_id * MSG_SIZE];
		if (wc.byte_len == 0)
			example_say(SIDE,
					"message %d: immediate 0x%08x and 0 bytes: the immediate "
					"is all there is",
					i, imm);
		else
			example_say(SIDE, "message %d: immediate 0x%08x and %u bytes: \"%.*s\"", i,
					imm, wc.byte_len, (int)strnlen(msg, wc.byte_len), msg);
	}

	if (example_wait_for_disconnect(SIDE, res->conn))
		return -1;
	return 0;
}
