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

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *mr = NULL, *recv_mr = NULL;
	struct rpma_cq *cq = NULL;

	char *memory = example_alloc(res, MEMORY_SIZE);
	char *recv_byte = example_alloc(res, 1);
	if (memory == NULL || recv_byte == NULL)
		return -1;
	*recv_byte = '-';
	if (example_mr_reg(res, memory, MEMORY_SIZE, RPMA_MR_USAGE_WRITE_DST, "memory", &mr) ||
			example_mr_reg(res, recv_byte, 1, RPMA_MR_USAGE_RECV, "recv", &recv_mr) ||
			example_pack_mr(res, mr, 0) || example_listen(res, addr, port))
		return -1;

	/* the write with immediate needs a receive; 1 byte suffices, it will not be filled */
	if (example_accept_with_recvs(res, recv_mr, 1, 1, &res->pdata))
		return -1;
	example_say(SIDE, "sent the descriptor of my memory; posted a 1-byte receive");

	struct ibv_wc wc;
	if (example_get_cqs(res, &cq, NULL) || example_wait_completion(SIDE, cq, &wc))
		return -1;
	if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
		example_say(SIDE, "ERROR: expected IBV_WC_RECV_RDMA_WITH_IMM, got opcode %d",
				wc.opcode);
		return -1;
	}
	example_say(SIDE, "got IBV_WC_RECV_RDMA_WITH_IMM: immediate %u, byte_len %u",
			ntohl(wc.imm_data), wc.byte_len);
	memory[MEMORY_SIZE - 1] = '\0';
	example_say(SIDE, "my memory now holds \"%s\"", memory);
	example_say(SIDE, "my 1-byte receive buffer still holds '%c'", *recv_byte);

	if (example_wait_for_disconnect(SIDE, res->conn))
		return -1;
	return 0;
}
