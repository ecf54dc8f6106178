/*
 * client.c -- the multiple-connections example, client side: opens three connections to the
 * server, one after another, so that all three are open at once. Through each one it writes
 * "hello from connection N" into the slot of the server's memory that this connection was
 * given, flushes it to visibility, and at the end closes all three.
 */
#include <stdio.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"
#define CONNECTIONS 3
#define MESSAGE_SIZE 32

struct connection {
	struct rpma_conn *conn;
	struct rpma_mr_remote *dst_mr;
	size_t offset;
};

/* writes this connection's message into its slot and waits for the flush after it */
static int
write_message(int number, struct connection *c, struct rpma_mr_local *src_mr,
		size_t src_offset, const char *message)
{
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	if ((ret = rpma_conn_get_cq(c->conn, &cq)))
		return example_fail(SIDE, "rpma_conn_get_cq", ret);
	if ((ret = rpma_write(c->conn, c->dst_mr, c->offset, src_mr, src_offset,
			MESSAGE_SIZE, RPMA_F_COMPLETION_ON_ERROR, NULL)))
		return example_fail(SIDE, "rpma_write", ret);
	if ((ret = rpma_flush(c->conn, c->dst_mr, c->offset, MESSAGE_SIZE,
			RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(SIDE, "rpma_flush", ret);
	if (example_wait_completion(SIDE, cq, &wc))
		return -1;
	example_say(SIDE, "connection %d wrote \"%s\" at offset %zu of the server's memory",
		number, message, c->offset);
	return 0;
}

int
example_client(const char *addr, const char *port)
{
	struct rpma_peer *peer = NULL;
	struct rpma_mr_local *src_mr = NULL;
	struct connection conns[CONNECTIONS];
	static char messages[CONNECTIONS][MESSAGE_SIZE];
	int ret, result = -1;

	memset(conns, 0, sizeof(conns));
	memset(messages, 0, sizeof(messages));
	for (int i = 0; i < CONNECTIONS; i++)
		snprintf(messages[i], MESSAGE_SIZE, "hello from connection %d", i + 1);

	if (example_peer_new(SIDE, addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &peer))
		return -1;
	if ((ret = rpma_mr_reg(peer, messages, sizeof(messages), RPMA_MR_USAGE_WRITE_SRC,
			&src_mr))) {
		example_fail(SIDE, "rpma_mr_reg", ret);
		goto err_peer_delete;
	}

	for (int i = 0; i < CONNECTIONS; i++) {
		example_say(SIDE, "opening connection %d to %s:%s", i + 1, addr, port);
		if (example_client_connect(SIDE, peer, addr, port, NULL, NULL, &conns[i].conn))
			goto err_conns_delete;
		if (example_unpack_descriptors(SIDE, conns[i].conn, &conns[i].dst_mr,
				&conns[i].offset, NULL))
			goto err_conns_delete;
		size_t size = 0;
		if ((ret = rpma_mr_remote_get_size(conns[i].dst_mr, &size))) {
			example_fail(SIDE, "rpma_mr_remote_get_size", ret);
			goto err_conns_delete;
		}
		if (conns[i].offset + MESSAGE_SIZE > size) {
			example_say(SIDE, "ERROR: slot at offset %zu is outside the server's memory",
				conns[i].offset);
			goto err_conns_delete;
		}
		example_say(SIDE, "connection %d got the slot at offset %zu", i + 1,
			conns[i].offset);
	}

	for (int i = 0; i < CONNECTIONS; i++) {
		if (write_message(i + 1, &conns[i], src_mr, (size_t)i * MESSAGE_SIZE,
				messages[i]))
			goto err_conns_delete;
	}
	result = 0;

err_conns_delete:
	for (int i = 0; i < CONNECTIONS; i++) {
		if (conns[i].conn == NULL)
			continue;
		(void) rpma_mr_remote_delete(&conns[i].dst_mr);
		example_say(SIDE, "closing connection %d", i + 1);
		if (example_disconnect(SIDE, conns[i].conn))
			result = -1;
		if ((ret = rpma_conn_delete(&conns[i].conn)))
			result = example_fail(SIDE, "rpma_conn_delete", ret);
	}
	if ((ret = rpma_mr_dereg(&src_mr)))
		result = example_fail(SIDE, "rpma_mr_dereg", ret);
err_peer_delete:
	if ((ret = rpma_peer_delete(&peer)))
		result = example_fail(SIDE, "rpma_peer_delete", ret);
	if (result == 0)
		example_say(SIDE, "done");
	return result;
}
