/*
 * cq_wait.c -- the receive-completion-queue example: the main CQ and the receive CQ have a
 * completion channel each, and each side waits on each CQ with rpma_cq_wait.
 */
#include "examples/common/example.h"
#include "examples/receive-completion-queue/rcq.h"

int
example_server(const char *addr, const char *port)
{
	return rcq_server(addr, port, false);
}

int
example_client(const char *addr, const char *port)
{
	return rcq_client(addr, port, false);
}
