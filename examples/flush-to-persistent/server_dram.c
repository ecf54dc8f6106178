/*
 * server_dram.c -- the flush-to-persistent example with a DRAM server: its memory is not
 * persistent, so a client can only flush its writes to visibility.
 */
#include "examples/common/example.h"
#include "examples/flush-to-persistent/server.h"

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	return flush_server(res, addr, port, false);
}
