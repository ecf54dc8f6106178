/*
 * server_pmem.c -- the flush-to-persistent example with a server whose memory is persistent
 * (the simulated device's memory is, by default): a client may flush its writes down to the
 * persistent domain.
 */
#include "examples/common/example.h"
#include "examples/flush-to-persistent/server.h"

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	return flush_server(res, addr, port, true);
}
