/*
 * server.c -- the read example, server side: registers a buffer holding a string as a read
 * source, sends its descriptor to the client as private data and waits while the client reads
 * it. The server takes no part in the read itself.
 */
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define MEMORY_SIZE 64

static const char text[] = "The quick brown fox, read straight from the server's memory.";
_Static_assert(sizeof(text) <= MEMORY_SIZE, "the text fits the server's memory");

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *mr = NULL;

	/* the text, in memory of its own; the client may read it, nothing else */
	char *memory = example_alloc(res, MEMORY_SIZE);
	if (memory == NULL)
		return -1;
	memcpy(memory, text, sizeof(text));
	if (example_mr_reg(res, memory, strlen(memory) + 1, RPMA_MR_USAGE_READ_SRC, NULL, &mr))
		return -1;
	example_say(SIDE, "my memory holds \"%s\" (%zu bytes with the terminating zero)", memory,
			strlen(memory) + 1);

	if (example_pack_mr(res, mr, 0) || example_listen(res, addr, port) ||
			example_accept(res, &res->pdata))
		return -1;
	example_say(SIDE, "sent the descriptor of my memory to the client as private data");

	example_say(SIDE, "waiting for the client to read and disconnect");
	if (example_wait_for_disconnect(SIDE, res->conn))
		return -1;
	return 0;
}
