/*
 * log.h -- the remote-log example's log, as it lies in the server's persistent memory: the
 * published tail (how many bytes of records count) on a line of its own, then the records,
 * each a header (its length and a checksum of its bytes) and its bytes, padded to 8.
 *
 * A client appends a record and then publishes the new tail. Recovery (check.c) trusts the
 * tail, so the record must be durable before the tail that covers it is.
 */
#ifndef RPMA_SIM_EXAMPLES_REMOTE_LOG_LOG_H
#define RPMA_SIM_EXAMPLES_REMOTE_LOG_LOG_H

#include <stddef.h>
#include <stdint.h>

#define LOG_SIZE 4096
#define LOG_TAIL_OFFSET 0 /* uint64_t: bytes of records published */
#define LOG_RECORDS_OFFSET 64
#define LOG_RECORDS_SIZE (LOG_SIZE - LOG_RECORDS_OFFSET)

struct log_record_header {
	uint32_t length; /* bytes of the record after the header */
	uint32_t checksum; /* log_checksum of them */
};

/* a record's whole size in the log: header, bytes, padding to 8 */
static inline size_t
log_record_size(uint32_t length)
{
	return sizeof(struct log_record_header) + ((length + 7u) & ~7u);
}

/* FNV-1a over the record's bytes, never 0 (a zeroed header is no record) */
static inline uint32_t
log_checksum(const void *data, size_t length)
{
	const unsigned char *bytes = data;
	uint32_t hash = 2166136261u;
	for (size_t i = 0; i < length; ++i)
		hash = (hash ^ bytes[i]) * 16777619u;
	return hash == 0 ? 1 : hash;
}

#endif /* RPMA_SIM_EXAMPLES_REMOTE_LOG_LOG_H */
