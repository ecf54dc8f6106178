/*
 * client.c -- the remote-log example, client side: appends records to the log in the
 * server's persistent memory, each then published by the new tail. A record must be durable
 * before the tail that covers it is: each is written and flushed to persistence, and only
 * then the tail is written and flushed.
 *
 * REMOTE_LOG_RECORDS=N appends N records (the texts below, again and again; 6 by default).
 *
 * Built with TAIL_BEFORE_DATA (remote-log-tail-first) it orders its flushes wrongly: it
 * writes the record and the tail, flushes the tail, and only then the record. A power
 * failure between the two flushes leaves a tail that covers a record that is not there;
 * rpma-sim-crash finds the point.
 */
#include <stdlib.h>
#include <string.h>

#include "examples/common/example.h"
#include "examples/remote-log/log.h"

#define SIDE "client"

static const char *const records[] = {
	"the first record",
	"a second one, somewhat longer than the first",
	"3",
	"a fourth record that spans more than one cache line of the log: it is long enough",
	"five",
	"and a sixth, the last",
};
#define TEXTS (sizeof(records) / sizeof(records[0]))

/* how many records to append: REMOTE_LOG_RECORDS, or one of each text */
static size_t
records_to_append(void)
{
	const char *count = getenv("REMOTE_LOG_RECORDS");
	long n = count != NULL ? strtol(count, NULL, 10) : 0;
	return n > 0 ? (size_t)n : TEXTS;
}

/* writes [offset, offset + length) of the local copy to the log, then flushes it */
static int
write_range(struct example_res *res, struct rpma_mr_local *src, size_t offset, size_t length)
{
	int ret = rpma_write(res->conn, res->remote_mr, offset, src, offset, length,
			RPMA_F_COMPLETION_ON_ERROR, NULL);
	return ret ? example_fail(SIDE, "rpma_write", ret) : 0;
}

static int
flush_range(struct example_res *res, struct rpma_cq *cq, size_t offset, size_t length)
{
	struct ibv_wc wc;
	int ret = rpma_flush(res->conn, res->remote_mr, offset, length, RPMA_FLUSH_TYPE_PERSISTENT,
			RPMA_F_COMPLETION_ALWAYS, NULL);
	if (ret)
		return example_fail(SIDE, "rpma_flush", ret);
	return example_next_completion(SIDE, cq, &wc);
}

int
example_client(struct example_res *res, const char *addr, const char *port)
{
	struct rpma_mr_local *src = NULL;
	struct rpma_cq *cq = NULL;

	/* a local copy of the log: what is written comes from the same offsets */
	char *local = example_alloc(res, LOG_SIZE);
	if (local == NULL ||
			example_mr_reg(res, local, LOG_SIZE, RPMA_MR_USAGE_WRITE_SRC, "log",
					&src) ||
			example_connect(res, addr, port, NULL) ||
			example_get_remote(res, LOG_SIZE, NULL, NULL, true) ||
			example_get_cqs(res, &cq, NULL))
		return -1;
	/* the server's writes reach persistent memory directly: flushes may be persistent */
	int ret = res->pcfg ? rpma_conn_apply_remote_peer_cfg(res->conn, res->pcfg) : RPMA_E_INVAL;
	if (ret)
		return example_fail(SIDE, "rpma_conn_apply_remote_peer_cfg", ret);

	uint64_t tail = 0;
	const size_t count = records_to_append();
	for (size_t i = 0; i < count; ++i) {
		const char *text = records[i % TEXTS];
		struct log_record_header header;
		header.length = (uint32_t)strlen(text);
		header.checksum = log_checksum(text, header.length);
		size_t at = LOG_RECORDS_OFFSET + tail;
		size_t size = log_record_size(header.length);
		if (tail + size > LOG_RECORDS_SIZE)
			return example_say(SIDE, "the log is full"), -1;
		memcpy(local + at, &header, sizeof(header));
		memcpy(local + at + sizeof(header), text, header.length);
		tail += size;
		memcpy(local + LOG_TAIL_OFFSET, &tail, sizeof(tail));
#ifdef TAIL_BEFORE_DATA
		/* wrong: the tail is durable before the record it covers */
		if (write_range(res, src, at, size) ||
				write_range(res, src, LOG_TAIL_OFFSET, sizeof(tail)) ||
				flush_range(res, cq, LOG_TAIL_OFFSET, sizeof(tail)) ||
				flush_range(res, cq, at, size))
			return -1;
#else
		/* the record durable first, then the tail that publishes it */
		if (write_range(res, src, at, size) || flush_range(res, cq, at, size) ||
				write_range(res, src, LOG_TAIL_OFFSET, sizeof(tail)) ||
				flush_range(res, cq, LOG_TAIL_OFFSET, sizeof(tail)))
			return -1;
#endif
		example_say(SIDE, "appended record %zu (%u bytes): tail %llu", i + 1, header.length,
				(unsigned long long)tail);
	}
	return 0; /* the frame disconnects (example_end) */
}
