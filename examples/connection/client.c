/*
 * client.c -- the connection example, client side: connects with private data, reads the
 * server's private data once established, and disconnects.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	int ret;

	char hello[] = "Hello server, this is the client.";
	struct rpma_conn_private_data pdata = { hello, sizeof(hello) };
	example_say(SIDE, "saying: \"%s\"", hello);
	if (example_connect(res, addr, port, &pdata))
		return -1;

	struct rpma_conn_private_data in;
	if ((ret = rpma_conn_get_private_data(res->conn, &in)))
		return example_fail(SIDE, "rpma_conn_get_private_data", ret);
	example_say(SIDE, "the server answered: \"%.*s\"", (int)in.len,
			in.ptr ? (const char *)in.ptr : "");

	/* example_end() disconnects and waits for the connection to close */
	example_say(SIDE, "disconnecting");
	return 0;
}
