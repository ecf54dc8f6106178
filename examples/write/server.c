/*
 * server.c -- the write example, server side: exposes an empty buffer the client may write to
 * (and read back from), sends its descriptor as private data, and once the client has
 * disconnected prints what landed in its memory.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define MEMORY_SIZE 64

static char memory[MEMORY_SIZE];

int
example_server(const char *addr, const char *port)
{
	struct example_res res;
	struct rpma_mr_local *mr = NULL;
	int result = -1;

	if (example_begin(&res, SIDE, addr, RPMA_UTIL_IBV_CONTEXT_LOCAL))
		goto out;

	/* the client may write this memory and read it back */
	memset(memory, 0, sizeof(memory));
	if (example_mr_reg(&res, memory, sizeof(memory),
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, NULL, &mr))
		goto out;
	example_say(SIDE, "my memory holds \"%s\" (%zu bytes, all zero)", memory,
		sizeof(memory));

	if (example_pack_mr(&res, mr, 0) || example_listen(&res, addr, port) ||
			example_accept(&res, &res.pdata))
		goto out;
	example_say(SIDE, "sent the descriptor of my memory to the client as private data");

	example_say(SIDE, "waiting for the client to write and disconnect");
	if (example_wait_for_disconnect(SIDE, res.conn))
		goto out;
	memory[MEMORY_SIZE - 1] = '\0';
	example_say(SIDE, "the client has left; my memory now holds \"%s\"", memory);
	result = 0;
out:
	return example_end(&res, result);
}
