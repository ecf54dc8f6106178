/*
 * cq_wait.c -- the messages-ping-pong example: each CQ has a completion channel of its own,
 * and each side waits for its completions with rpma_cq_wait.
 */
#include "examples/common/example.h"
#include "examples/messages-ping-pong/ping_pong.h"

int
example_server(const char *addr, const char *port)
{
	return ping_pong_server(addr, port, false);
}

int
example_client(const char *addr, const char *port)
{
	return ping_pong_client(addr, port, false);
}
