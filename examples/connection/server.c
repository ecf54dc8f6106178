/*
 * server.c -- the connection example, server side: listens, reads the client's private
 * data from its request, accepts with private data of its own, and waits for the client to
 * disconnect.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_conn_req *req = NULL;
	int ret;

	if (example_listen(res, addr, port))
		return -1;

	if (example_wait_for_client(SIDE, res->ep))
		return -1;
	if ((ret = rpma_ep_next_conn_req(res->ep, NULL, &req)))
		return example_fail(SIDE, "rpma_ep_next_conn_req", ret);
	struct rpma_conn_private_data in;
	if ((ret = rpma_conn_req_get_private_data(req, &in))) {
		example_fail(SIDE, "rpma_conn_req_get_private_data", ret);
		(void)rpma_conn_req_delete(&req);
		return -1;
	}
	example_say(SIDE, "a client asks to connect and says: \"%.*s\"", (int)in.len,
			in.ptr ? (const char *)in.ptr : "");

	char reply[] = "Welcome, client: this is the server.";
	struct rpma_conn_private_data pdata = { reply, sizeof(reply) };
	example_say(SIDE, "accepting, answering: \"%s\"", reply);
	if (example_conn_req_connect(SIDE, &req, &pdata, &res->conn))
		return -1;

	example_say(SIDE, "waiting for the client to disconnect");
	if (example_wait_for_disconnect(SIDE, res->conn))
		return -1;
	return 0;
}
