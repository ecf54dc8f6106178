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

/* where each connection's slot starts in the server's memory */
static size_t offsets[CONNECTIONS];

/* writes this connection's message into its slot and waits for the flush after it */
static int
write_message(int number, struct example_res *c, size_t offset, struct rpma_mr_local *src_mr,
		size_t src_offset, const char *message)
{
	struct rpma_cq *cq = NULL;
	struct ibv_wc wc;
	int ret;

	if (example_get_cqs(c, &cq, NULL))
		return -1;
	if ((ret = rpma_write(c->conn, c->remote_mr, offset, src_mr, src_offset, MESSAGE_SIZE,
			     RPMA_F_COMPLETION_ON_ERROR, NULL)))
		return example_fail(SIDE, "rpma_write", ret);
	if ((ret = rpma_flush(c->conn, c->remote_mr, offset, MESSAGE_SIZE,
			     RPMA_FLUSH_TYPE_VISIBILITY, RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(SIDE, "rpma_flush", ret);
	if (example_wait_completion(SIDE, cq, &wc))
		return -1;
	example_say(SIDE, "connection %d wrote \"%s\" at offset %zu of the server's memory", number,
			message, offset);
	return 0;
}

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct example_res conns[CONNECTIONS];
	struct rpma_mr_local *src_mr = NULL;
	int result = -1;

	memset(conns, 0, sizeof(conns));
	/* connection i's message at offset i * MESSAGE_SIZE */
	char *messages = example_alloc(res, CONNECTIONS * MESSAGE_SIZE);
	if (messages == NULL)
		return -1;
	for (int i = 0; i < CONNECTIONS; i++)
		snprintf(&messages[i * MESSAGE_SIZE], MESSAGE_SIZE, "hello from connection %d",
				i + 1);

	if (example_mr_reg(res, messages, CONNECTIONS * MESSAGE_SIZE, RPMA_MR_USAGE_WRITE_SRC, NULL,
			    &src_mr))
		return -1;

	/* each connection is a side of its own on the one peer: it holds a connection only */
	for (int i = 0; i < CONNECTIONS; i++) {
		struct example_res *c = &conns[i];
		c->side = SIDE;
		c->peer = res->peer;
		example_say(SIDE, "opening connection %d", i + 1);
		if (example_connect(c, addr, port, NULL) ||
				example_get_remote(c, MESSAGE_SIZE, &offsets[i], NULL, false))
			goto out;
		example_say(SIDE, "connection %d got the slot at offset %zu", i + 1, offsets[i]);
	}

	for (int i = 0; i < CONNECTIONS; i++) {
		if (write_message(i + 1, &conns[i], offsets[i], src_mr, (size_t)i * MESSAGE_SIZE,
				    &messages[i * MESSAGE_SIZE]))
			goto out;
	}
	result = 0;
out:
	for (int i = 0; i < CONNECTIONS; i++) {
		if (conns[i].conn == NULL)
			continue;
		example_say(SIDE, "closing connection %d", i + 1);
		result = example_conn_close(&conns[i], result);
	}
	return result;
}
