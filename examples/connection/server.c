/*
 * server.c -- the connection example, server side: listens, reads the client's private
 * data from its request, accepts with private data of its own, and waits for the client to
 * disconnect.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"

int
example_server(const char *addr, const char *port)
{
	struct ibv_context *ibv_ctx = NULL;
	struct rpma_peer *peer = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn_req *req = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if ((ret = rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ibv_ctx)))
		return example_fail(SIDE, "rpma_utils_get_ibv_context", ret);
	if ((ret = rpma_peer_new(ibv_ctx, &peer)))
		return example_fail(SIDE, "rpma_peer_new", ret);
	if ((ret = rpma_ep_listen(peer, addr, port, &ep))) {
		example_fail(SIDE, "rpma_ep_listen", ret);
		goto err_peer_delete;
	}
	example_say(SIDE, "listening on %s:%s", addr, port);
	example_server_listening();

	if ((ret = rpma_ep_next_conn_req(ep, NULL, &req))) {
		example_fail(SIDE, "rpma_ep_next_conn_req", ret);
		goto err_ep_shutdown;
	}
	struct rpma_conn_private_data in;
	if ((ret = rpma_conn_req_get_private_data(req, &in))) {
		example_fail(SIDE, "rpma_conn_req_get_private_data", ret);
		rpma_conn_req_delete(&req);
		goto err_ep_shutdown;
	}
	example_say(SIDE, "a client asks to connect and says: \"%.*s\"", (int)in.len,
		in.ptr ? (const char *)in.ptr : "");

	char reply[] = "Welcome, client: this is the server.";
	struct rpma_conn_private_data out = {reply, sizeof(reply)};
	if ((ret = rpma_conn_req_connect(&req, &out, &conn))) {
		example_fail(SIDE, "rpma_conn_req_connect", ret);
		goto err_ep_shutdown;
	}
	example_say(SIDE, "accepted, answering: \"%s\"", reply);
	if (example_expect_event(SIDE, conn, RPMA_CONN_ESTABLISHED))
		goto err_conn_delete;

	example_say(SIDE, "waiting for the client to disconnect");
	if (example_expect_event(SIDE, conn, RPMA_CONN_CLOSED))
		goto err_conn_delete;
	if ((ret = rpma_conn_disconnect(conn))) {
		example_fail(SIDE, "rpma_conn_disconnect", ret);
		goto err_conn_delete;
	}
	result = 0;

err_conn_delete:
	if ((ret = rpma_conn_delete(&conn)))
		result = example_fail(SIDE, "rpma_conn_delete", ret);
err_ep_shutdown:
	if ((ret = rpma_ep_shutdown(&ep)))
		result = example_fail(SIDE, "rpma_ep_shutdown", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
