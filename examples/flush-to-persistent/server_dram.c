/*
 * server_dram.c -- the flush-to-persistent example with a DRAM server: its memory is not
 * persistent, so a client can only flush its writes to visibility.
 */
#include <rpma_sim.h>

#include "examples/common/example.h"
#include "examples/flush-to-persistent/server.h"

/*
 * On the simulator, this machine's memory is DRAM too (as RPMA_SIM_PMEM=0 says), before any
 * peer exists: so it does not report the client's writes as never made durable, which on
 * DRAM nothing can make them. Real hardware needs no such call (RPMA_E_NOSUPP).
 */
__attribute__((constructor)) static void
dram_device(void)
{
	(void)rpma_sim_set_device_cap(RPMA_SIM_CAP_PERSISTENT_MEMORY, false);
}

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	return flush_server(res, addr, port, false);
}
