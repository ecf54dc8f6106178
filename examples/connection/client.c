/*
 * client.c -- the connection example, client side: connects with private data, reads the
 * server's private data once established, and disconnects.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

int
example_client(const char *addr, const char *port)
{
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if ((ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ibv_ctx)))
		return example_fail(SIDE, "rpma_utils_get_ibv_context", ret);
	if ((ret = rpma_peer_new(ibv_ctx, &peer)))
		return example_fail(SIDE, "rpma_peer_new", ret);
	if ((ret = rpma_conn_req_new(peer, addr, port, NULL, &req))) {
		example_fail(SIDE, "rpma_conn_req_new", ret);
		goto err_peer_delete;
	}

	char hello[] = "Hello server, this is the client.";
	struct rpma_conn_private_data out = {hello, sizeof(hello)};
	example_say(SIDE, "connecting to %s:%s, saying: \"%s\"", addr, port, hello);
	if ((ret = rpma_conn_req_connect(&req, &out, &conn))) {
		example_fail(SIDE, "rpma_conn_req_connect", ret);
		goto err_peer_delete;
	}
	if (example_expect_event(SIDE, conn, RPMA_CONN_ESTABLISHED))
		goto err_conn_delete;

	struct rpma_conn_private_data in;
	if ((ret = rpma_conn_get_private_data(conn, &in))) {
		example_fail(SIDE, "rpma_conn_get_private_data", ret);
		goto err_conn_delete;
	}
	example_say(SIDE, "the server answered: \"%.*s\"", (int)in.len,
		in.ptr ? (const char *)in.ptr : "");

	example_say(SIDE, "disconnecting");
	if ((ret = rpma_conn_disconnect(conn))) {
		example_fail(SIDE, "rpma_conn_disconnect", ret);
		goto err_conn_delete;
	}
	if (example_expect_event(SIDE, conn, RPMA_CONN_CLOSED))
		goto err_conn_delete;
	result = 0;

err_conn_delete:
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
