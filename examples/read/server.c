/*
 * server.c -- the read example, server side: registers a buffer holding a string as a read
 * source, sends its descriptor to the client as private data and waits while the client reads
 * it. The server takes no part in the read itself.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"

static char memory[64] = "The quick brown fox, read straight from the server's memory.";

int
example_server(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *mr = NULL;
	struct rpma_ep *ep = NULL;
	struct rpma_conn *conn = NULL;
	int ret, result = -1;

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &peer))
		return -1;

	/* the client may read this memory, nothing else */
	if ((ret = rpma_mr_reg(peer, memory, strlen(memory) + 1, RPMA_MR_USAGE_READ_SRC,
			&mr))) {
		example_fail(SIDE, "rpma_mr_reg", ret);
		goto err_peer_delete;
	}
	example_say(SIDE, "my memory holds \"%s\" (%zu bytes with the terminating zero)",
		memory, strlen(memory) + 1);

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

	if (example_server_accept(SIDE, ep, NULL, &pdata, &conn))
		goto err_ep_shutdown;
	example_say(SIDE, "sent the descriptor of my memory to the client as private data");

	example_say(SIDE, "waiting for the client to read and disconnect");
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
	if ((ret = rpma_mr_dereg(&mr)))
		result = example_fail(SIDE, "rpma_mr_dereg", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
