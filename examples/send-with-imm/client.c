/*
 * client.c -- the send-with-imm example, client side: sends a message together with a 32-bit
 * immediate value (rpma_send_with_imm), then a message of 0 bytes (no buffer at all) that
 * carries only an immediate value.
 */
#include <stdint.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

static char message[] = "A message with an immediate value.";

#define IMM_WITH_DATA 0xc0ffee00u
#define IMM_ALONE 0x0000beefu

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *send_mr = NULL;
	struct rpma_conn *conn = NULL;
	struct ibv_wc wc;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer))
		return -1;
	if ((ret = rpma_mr_reg(peer, message, sizeof(message), RPMA_MR_USAGE_SEND,
			&send_mr))) {
		example_fail(SIDE, "rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	example_say(SIDE, "connecting to %s:%s", addr, port);
	if (example_client_connect(SIDE, peer, addr, port, NULL, NULL, &conn))
		goto err_mr_dereg;
	struct rpma_cq *cq = NULL;
	if ((ret = rpma_conn_get_cq(conn, &cq))) {
		example_fail(SIDE, "rpma_conn_get_cq", ret);
		goto err_disconnect;
	}

	example_say(SIDE, "sending \"%s\" (%zu bytes) with immediate 0x%08x", message,
		strlen(message), IMM_WITH_DATA);
	if ((ret = rpma_send_with_imm(conn, send_mr, 0, strlen(message),
			RPMA_F_COMPLETION_ALWAYS, IMM_WITH_DATA, NULL))) {
		example_fail(SIDE, "rpma_send_with_imm", ret);
		goto err_disconnect;
	}
	if (example_wait_completion(SIDE, cq, &wc))
		goto err_disconnect;

	example_say(SIDE, "sending 0 bytes with immediate 0x%08x", IMM_ALONE);
	if ((ret = rpma_send_with_imm(conn, NULL, 0, 0, RPMA_F_COMPLETION_ALWAYS, IMM_ALONE,
			NULL))) {
		example_fail(SIDE, "rpma_send_with_imm", ret);
		goto err_disconnect;
	}
	if (example_wait_completion(SIDE, cq, &wc))
		goto err_disconnect;
	example_say(SIDE, "both sends completed");
	result = 0;

err_disconnect:
	if (example_disconnect(SIDE, conn))
		result = -1;
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_mr_dereg:
	if ((ret = rpma_mr_dereg(&send_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
