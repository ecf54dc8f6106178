/*
 * server.c -- the atomic-write example, server side: exposes a log: an 8-byte "used" header
 * (how many bytes of entries are valid) followed by room for entries. The client appends
 * entries and then moves the header with rpma_atomic_write, so the log is never seen with a
 * header that counts an entry not yet written. After the client has left, the server prints
 * the log as its header describes it.
 */
#include <inttypes.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "server"
#define LOG_SIZE 256
#define HEADER_SIZE 8 /* uint64_t used */

int
example_server(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *mr = NULL;

	/*
	 * an empty log; the client reads its header, writes it and flushes (a read). Its
	 * memory is page-aligned, so the header is 8-byte aligned, as rpma_atomic_write needs.
	 */
	uint64_t *log_memory = example_alloc(res, LOG_SIZE);
	if (log_memory == NULL)
		return -1;
	if (example_mr_reg(res, log_memory, LOG_SIZE,
			    RPMA_MR_USAGE_READ_SRC | RPMA_MR_USAGE_WRITE_DST |
					    RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			    NULL, &mr))
		return -1;
	example_say(SIDE, "my log is empty: used = %" PRIu64 ", room for %d bytes of entries",
			log_memory[0], LOG_SIZE - HEADER_SIZE);

	if (example_pack_mr(res, mr, 0) || example_listen(res, addr, port) ||
			example_accept(res, &res->pdata))
		return -1;

	example_say(SIDE, "waiting for the client to append to my log and disconnect");
	if (example_wait_for_disconnect(SIDE, res->conn))
		return -1;

	uint64_t used = log_memory[0];
	example_say(SIDE, "the client has left; my log's header says used = %" PRIu64, used);
	if (used > LOG_SIZE - HEADER_SIZE) {
		example_say(SIDE, "ERROR: the header counts more than the log holds");
		return -1;
	}
	const char *entries = (const char *)log_memory + HEADER_SIZE;
	int n = 0;
	for (uint64_t pos = 0; pos < used; n++) {
		size_t len = strnlen(entries + pos, used - pos);
		example_say(SIDE, "entry %d: \"%.*s\"", n + 1, (int)len, entries + pos);
		pos += len + 1; /* each entry ends with its zero */
	}
	example_say(SIDE, "%d entries in the log", n);
	return 0;
}
