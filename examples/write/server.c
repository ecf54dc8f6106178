/*
 * server.c -- the write example, server side: exposes an empty buffer the client may write to
 * (and read back from), sends its descriptor as private data, and once the client has
 * disconnected prints what landed in its memory.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define MEMORY_SIZE 64

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *mr = NULL;

	/* the client may write this memory and read it back */
	char *memory = example_alloc(res, MEMORY_SIZE);
	if (memory == NULL ||
			example_mr_reg(res, memory, MEMORY_SIZE,
					RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_READ_SRC, NULL,
					&mr))
		return -1;
	example_say(SIDE, "my memory holds \"%s\" (%zu bytes, all zero)", memory,
			(size_t)MEMORY_SIZE);

	if (example_pack_mr(res, mr, 0) || example_listen(res, addr, port) ||
			example_accept(res, &res->pdata))
		return -1;
	example_say(SIDE, "sent the descriptor of my memory to the client as private data");

	example_say(SIDE, "waiting for the client to write and disconnect");
	if (example_wait_for_disconnect(SIDE, res->conn))
		return -1;
	memory[MEMORY_SIZE - 1] = '\0';
	example_say(SIDE, "the client has left; my memory now holds \"%s\"", memory);
	return 0;
}
