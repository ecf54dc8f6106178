/*
 * server.h -- the flush-to-persistent example's server, shared by its two variants: DRAM
 * (server_dram.c) and persistent memory (server_pmem.c).
 */
#ifndef FLUSH_TO_PERSISTENT_SERVER_H
#define FLUSH_TO_PERSISTENT_SERVER_H

#include <stdbool.h>

#include "examples/common/example.h"

/*
 * runs the server; pmem says whether its memory is persistent and written to directly (no
 * CPU cache in the way), so that a client may flush to persistence
 */
int flush_server(struct example_res *res, const char *addr, const char *port, bool pmem);

#endif /* FLUSH_TO_PERSISTENT_SERVER_H */
