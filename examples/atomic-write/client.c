/*
 * client.c -- the atomic-write example, client side: appends three entries to the server's
 * log. For each one it writes the entry behind the used part, flushes it (VISIBILITY), then
 * updates the 8-byte "used" header with rpma_atomic_write and flushes again: the header
 * changes all at once, and only after the entry it counts is in place.
 */
#include <inttypes.h>
#include <string.h>

#include "examples/common/example.h"

#define SIDE "client"
#define HEADER_SIZE 8 /* uint64_t used, at offset 0 */
#define ENTRIES 3
#define LOCAL_SIZE 256

static const char *entries[ENTRIES] = {
	"first: the log begins",
	"second: appended after the first",
	"third: the last one",
};

/* flushes [offset, offset + len) of the remote region and waits for the flush to complete */
static int
flush_and_wait(struct rpma_conn *conn, struct rpma_cq *cq, struct rpma_mr_remote *dst_mr,
		size_t offset, size_t len)
{
	struct ibv_wc wc;
	int ret = rpma_flush(conn, dst_mr, offset, len, RPMA_FLUSH_TYPE_VISIBILITY,
			RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret)
		return example_fail(SIDE, "rpma_flush", ret);
	return example_wait_completion(SIDE, cq, &wc);
}

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *local_mr = NULL;
	struct rpma_cq *cq = NULL;
	size_t log_offset = 0, log_size = 0;
	int ret;

	/* [0..7]: the header as read from the server; then the entry being written */
	char *local = example_alloc(res, LOCAL_SIZE);
	if (local == NULL)
		return -1;
	if (example_mr_reg(res, local, LOCAL_SIZE, RPMA_MR_USAGE_READ_DST | RPMA_MR_USAGE_WRITE_SRC,
			    NULL, &local_mr))
		return -1;

	if (example_connect(res, addr, port, NULL) ||
			example_get_remote(res, HEADER_SIZE, &log_offset, &log_size, false) ||
			example_get_cqs(res, &cq, NULL))
		return -1;
	struct rpma_mr_remote *log_mr = res->remote_mr;

	/* where does the log end now? */
	struct ibv_wc wc;
	if ((ret = rpma_read(res->conn, local_mr, 0, log_mr, log_offset, HEADER_SIZE,
			     RPMA_F_COMPLETION_ALWAYS, NULL)))
		return example_fail(SIDE, "rpma_read", ret);
	if (example_wait_completion(SIDE, cq, &wc))
		return -1;
	uint64_t used;
	memcpy(&used, local, sizeof(used));
	example_say(SIDE, "the server's log has used = %" PRIu64 " (%zu bytes in all)", used,
			log_size);

	for (int i = 0; i < ENTRIES; i++) {
		size_t len = strlen(entries[i]) + 1;
		size_t entry_offset = log_offset + HEADER_SIZE + used;
		if (entry_offset + len > log_size || HEADER_SIZE + len > LOCAL_SIZE) {
			example_say(SIDE, "ERROR: no room for entry %d", i + 1);
			return -1;
		}

		/* 1. the entry, behind what the header counts, made visible */
		memcpy(&local[HEADER_SIZE], entries[i], len);
		if ((ret = rpma_write(res->conn, log_mr, entry_offset, local_mr, HEADER_SIZE, len,
				     RPMA_F_COMPLETION_ON_ERROR, NULL)))
			return example_fail(SIDE, "rpma_write", ret);
		if (flush_and_wait(res->conn, cq, log_mr, entry_offset, len))
			return -1;
		example_say(SIDE, "wrote entry %d \"%s\" at offset %zu and flushed it", i + 1,
				entries[i], entry_offset);

		/* 2. the header, in one 8-byte atomic write, made visible */
		used += len;
		char header[8];
		memcpy(header, &used, sizeof(header));
		if ((ret = rpma_atomic_write(res->conn, log_mr, log_offset, header,
				     RPMA_F_COMPLETION_ON_ERROR, NULL)))
			return example_fail(SIDE, "rpma_atomic_write", ret);
		if (flush_and_wait(res->conn, cq, log_mr, log_offset, HEADER_SIZE))
			return -1;
		example_say(SIDE,
				"set the header to used = %" PRIu64
				" with rpma_atomic_write and flushed it",
				used);
	}
	return 0;
}
